package app

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

const (
	// eventSource is the meta.source and the turn surface of the inputs
	// events make.
	eventSource = "event"
	// automatedTurnLimit is the failure code of a turn refused because
	// its conversation had AGENT_AUTOMATED_TURN_LIMIT automated turns
	// since a person's last message.
	automatedTurnLimit = "automated_turn_limit"
	// maxEventBody bounds an event's body: GitHub's payloads run to a
	// few hundred KiB.
	maxEventBody = 4 << 20
)

// event is one event the agent takes: a GitHub webhook, or another
// source's through the ingest route.
type event struct {
	Source, ID     string // the delivery: a provider may send it again
	Type, Resource string // issues.opened, github:owner/repo#12
	Payload        json.RawMessage
	Summary        string // what the model reads of the payload
}

// describe is the event as the model reads it.
func (ev event) describe() string {
	s := ev.Source + " event " + ev.Type
	if ev.Resource != "" {
		s += " on " + ev.Resource
	}
	if ev.Summary != "" {
		s += "\n" + ev.Summary
	}
	return s
}

// githubWebhook is POST /api/webhooks/github: a GitHub webhook, signed
// as GitHub signs (X-Hub-Signature-256: sha256= and the hex HMAC-SHA256
// of the raw body with GITHUB_WEBHOOK_SECRET), named by X-GitHub-Event
// and X-GitHub-Delivery. It becomes the event source "github", type
// event.action, resource github:owner/repo#number.
func (a *App) githubWebhook(w http.ResponseWriter, r *http.Request) {
	if a.cfg.GitHubWebhookSecret == "" {
		writeError(w, http.StatusNotFound, "this route is off: set GITHUB_WEBHOOK_SECRET to turn it on")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "the body is unreadable or over 4 MiB: "+err.Error())
		return
	}
	if err := verifyGitHub(a.cfg.GitHubWebhookSecret, r.Header.Get("X-Hub-Signature-256"), body); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	name, delivery := r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery")
	if name == "" || delivery == "" || strings.ContainsRune(name+delivery, 0) {
		writeError(w, http.StatusBadRequest, "X-GitHub-Event and X-GitHub-Delivery are required")
		return
	}
	ev, err := githubEvent(name, delivery, body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	a.take(w, r, ev)
}

// verifyGitHub checks GitHub's signature of body, in constant time.
func verifyGitHub(secret, signature string, body []byte) error {
	sig, ok := strings.CutPrefix(signature, "sha256=")
	got, err := hex.DecodeString(sig)
	if !ok || err != nil {
		return errors.New("send X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body with GITHUB_WEBHOOK_SECRET>")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return errors.New("X-Hub-Signature-256 does not match the body: not signed with GITHUB_WEBHOOK_SECRET")
	}
	return nil
}

// githubItem is an issue or a pull request of a payload.
type githubItem struct {
	Number  int    `json:"number"`
	Title   string `json:"title"`
	State   string `json:"state"`
	HTMLURL string `json:"html_url"`
}

// githubEvent reads a webhook's payload: its type, resource and the
// summary the model reads (the payload whole is mostly URLs).
func githubEvent(name, delivery string, body []byte) (event, error) {
	var p struct {
		Action     string `json:"action"`
		Number     int    `json:"number"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
		Issue       *githubItem `json:"issue"`
		PullRequest *githubItem `json:"pull_request"`
		Comment     *struct {
			Body string `json:"body"`
		} `json:"comment"`
		Review *struct {
			State, Body string
		} `json:"review"`
		Ref string `json:"ref"`
	}
	if err := json.Unmarshal(body, &p); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return event{}, errors.New("the body is not a JSON object: set the webhook's content type to application/json")
	}
	ev := event{Source: "github", ID: delivery, Type: name, Payload: body}
	if p.Action != "" {
		ev.Type += "." + p.Action
	}
	item := p.Issue
	if item == nil {
		item = p.PullRequest
	}
	number := p.Number
	if item != nil && item.Number != 0 {
		number = item.Number
	}
	if p.Repository.FullName != "" {
		ev.Resource = "github:" + p.Repository.FullName
		if number != 0 {
			ev.Resource += fmt.Sprintf("#%d", number)
		}
	}
	var lines []string
	add := func(label, v string) {
		if v != "" {
			lines = append(lines, label+": "+truncate(v, 2000))
		}
	}
	if item != nil {
		add("Title", item.Title)
		add("State", item.State)
		add("URL", item.HTMLURL)
	}
	add("By", p.Sender.Login)
	add("Ref", p.Ref)
	if p.Review != nil {
		add("Review", strings.TrimSpace(p.Review.State+" "+p.Review.Body))
	}
	if p.Comment != nil {
		add("Comment", p.Comment.Body)
	}
	ev.Summary = strings.Join(lines, "\n")
	return ev.clean(), nil
}

// ingestEvent is POST /api/events, with AGENT_EVENT_SECRET as a bearer:
// {id?, source, type, resource?, payload?}, another source's event. An id
// seen before from the source is a duplicate; none, and the event is new.
func (a *App) ingestEvent(w http.ResponseWriter, r *http.Request) {
	if a.cfg.EventSecret == "" {
		writeError(w, http.StatusNotFound, "this route is off: set AGENT_EVENT_SECRET to turn it on")
		return
	}
	if !bearer(r, a.cfg.EventSecret) {
		writeError(w, http.StatusUnauthorized, "send Authorization: Bearer $AGENT_EVENT_SECRET")
		return
	}
	var body struct {
		ID, Source, Type, Resource string
		Payload                    json.RawMessage
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxEventBody)).Decode(&body); err != nil ||
		body.Source == "" || body.Type == "" || strings.ContainsRune(body.ID+body.Source+body.Type+body.Resource, 0) {
		writeError(w, http.StatusBadRequest, `the body must be {"id"?, "source", "type", "resource"?, "payload"?}, without NUL characters`)
		return
	}
	if body.ID == "" {
		body.ID = rand.Text()
	}
	ev := event{Source: body.Source, ID: body.ID, Type: body.Type, Resource: body.Resource, Payload: body.Payload}
	if len(body.Payload) > 0 && string(body.Payload) != "null" {
		ev.Summary = "Payload: " + truncate(string(body.Payload), 4000)
	}
	a.take(w, r, ev.clean())
}

// take keeps ev once and dispatches it as background work the idle route
// waits for: 202 {"status": "accepted"}, or 200 {"status": "duplicate"}
// for a delivery taken before, which is not dispatched again.
func (a *App) take(w http.ResponseWriter, r *http.Request, ev event) {
	fresh, err := a.st.RecordEvent(r.Context(), ev.Source, ev.ID, ev.Type, ev.Resource, ev.Payload)
	if err != nil {
		a.internalError(w, err)
		return
	}
	if !fresh {
		writeJSON(w, http.StatusOK, map[string]string{"status": "duplicate", "eventId": ev.ID})
		return
	}
	a.goBackground(func(ctx context.Context) { a.dispatch(ctx, ev) })
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted", "eventId": ev.ID})
}

// dispatch runs each event automation ev matches, in a conversation of
// its own that posts to the automation's channel, and tells each
// conversation that watches it.
func (a *App) dispatch(ctx context.Context, ev event) {
	autos, err := a.st.EventAutomations(ctx, ev.Source, ev.Type, ev.Resource)
	if err != nil {
		a.logf(slog.LevelError, "event %s %s: %v", ev.Source, ev.ID, err)
	}
	for _, au := range autos {
		id := "local:event:" + au.ID + ":" + hash24(ev.Source, ev.ID)[:16]
		src, _ := json.Marshal(map[string]any{"platform": "slack", "teamId": au.TeamID, "channelId": au.ChannelID})
		a.automated(ctx, id, &store.Conversation{ID: id, Source: eventSource, SourceJS: src}, ev,
			au.Task+"\n\n"+ev.describe(), turn.Place{Channel: au.ChannelID, TeamID: au.TeamID})
	}
	watches, err := a.st.Watches(ctx, ev.Source, ev.Type, ev.Resource)
	if err != nil {
		a.logf(slog.LevelError, "event %s %s: %v", ev.Source, ev.ID, err)
	}
	// One notification per conversation, however many of its watches
	// the event matches.
	intents := map[string][]string{}
	for _, w := range watches {
		intents[w.ConversationID] = append(intents[w.ConversationID], w.Intent)
	}
	for _, id := range slices.Sorted(maps.Keys(intents)) {
		conv, err := a.st.Conversation(ctx, id)
		if err != nil {
			a.logf(slog.LevelError, "event %s %s: %v", ev.Source, ev.ID, err)
			continue
		}
		text := "An event on what this conversation watches: " + ev.describe()
		if why := slices.DeleteFunc(intents[id], func(s string) bool { return s == "" }); len(why) > 0 {
			text += "\nWatched for: " + strings.Join(why, "; ")
		}
		a.automated(ctx, id, nil, ev, text, place(conv))
	}
}

// place is where a conversation's replies go: its Slack thread or
// channel, or the web.
func place(conv store.Conversation) turn.Place {
	var s struct{ Platform, TeamID, ChannelID, ThreadTs string }
	if json.Unmarshal(conv.SourceJS, &s) != nil || s.Platform != "slack" {
		return turn.Place{}
	}
	return turn.Place{Channel: s.ChannelID, ThreadTS: s.ThreadTs, TeamID: s.TeamID}
}

// automated writes ev's input (text) into conversation id, made from
// create unless nil, and queues its turn, which replies to to. A conversation that has had
// AGENT_AUTOMATED_TURN_LIMIT automated inputs since a person's last
// message does not run it: the input is stored with a turn that failed
// at once with automated_turn_limit, which the reporting route shows,
// and the refusal is logged.
func (a *App) automated(ctx context.Context, id string, create *store.Conversation, ev event, text string, to turn.Place) {
	msgID := "event-" + hash24(id, ev.Source, ev.ID)
	payload := map[string]any{"meta": map[string]any{"author": map[string]any{"isBot": true, "userName": ev.Source}, "source": eventSource,
		"event": map[string]any{"source": ev.Source, "id": ev.ID, "type": ev.Type, "resource": ev.Resource}},
		"role": "user", "text": text, "messageId": msgID}
	in := turn.Input{MessageID: msgID, Text: text, Surface: eventSource, Payload: payload, Place: to,
		Author: turn.Author{UserID: "event:" + ev.Source, UserName: ev.Source, Platform: "system"}}
	n, err := a.st.CountAutomated(ctx, id, []string{"scheduler", eventSource})
	if err != nil {
		a.logf(slog.LevelError, "event %s %s: %v", ev.Source, ev.ID, err)
		return
	}
	rows := []store.Row{junior.Message(msgID, payload)}
	refused := n > a.cfg.AutomatedTurnLimit
	if refused {
		turnID := junior.TurnID(msgID)
		rows = append(rows, junior.TurnStarted(turnID, eventSource, []string{msgID}),
			junior.TurnFailed(turnID, automatedTurnLimit), junior.MessageHandled(msgID))
	}
	var seqs []int
	if create != nil {
		seqs, err = a.st.Create(ctx, *create, rows...)
	} else {
		seqs, err = a.st.Append(ctx, id, rows...)
	}
	switch {
	case err != nil:
		a.logf(slog.LevelError, "event %s %s: %v", ev.Source, ev.ID, err)
	case len(seqs) == 0:
		// Stored already: this event reached the conversation before.
	case refused:
		a.logf(slog.LevelWarn, "event %s %s: not run in %s: it is its automated turn %d since a person's last message, past AGENT_AUTOMATED_TURN_LIMIT=%d",
			ev.Source, ev.ID, id, n, a.cfg.AutomatedTurnLimit)
	default:
		a.turns.Enqueue(id, in)
	}
}

// clean takes out what no text column holds (NUL, bytes that are not
// UTF-8) from what the event's rows will carry.
func (ev event) clean() event {
	fix := func(s string) string { return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "") }
	ev.Source, ev.ID, ev.Type, ev.Resource, ev.Summary = fix(ev.Source), fix(ev.ID), fix(ev.Type), fix(ev.Resource), fix(ev.Summary)
	// Valid JSON has no raw NUL; it may have bytes that are not UTF-8.
	ev.Payload = json.RawMessage(strings.ToValidUTF8(string(ev.Payload), "\uFFFD"))
	return ev
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// addEventAutomation is POST /api/internal/event-automations: {id,
// source, type, resource?, task, teamId, channelId}, a task run when an
// event matches, posting to a Slack channel.
func (a *App) addEventAutomation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID, Source, Type, Resource, Task, TeamID, ChannelID string
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil ||
		body.ID == "" || body.Source == "" || body.Type == "" || strings.TrimSpace(body.Task) == "" || body.ChannelID == "" {
		writeError(w, http.StatusBadRequest, `the body must be {"id", "source", "type", "resource"?, "task", "teamId", "channelId"}`)
		return
	}
	if strings.ContainsRune(body.ID+body.Source+body.Type+body.Resource+body.Task+body.TeamID+body.ChannelID, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	err := a.st.AddEventAutomation(r.Context(), store.EventAutomation{ID: body.ID, Task: body.Task, TeamID: body.TeamID, ChannelID: body.ChannelID,
		Filter: store.EventFilter{Source: body.Source, Type: body.Type, Resource: body.Resource}})
	a.created(w, err, "event automation "+body.ID)
}

// addWatch is POST /api/internal/watches: {id, conversationId, source,
// type?, resource, intent?}, the conversation told of the resource's
// events.
func (a *App) addWatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID, ConversationID, Source, Type, Resource, Intent string
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil ||
		body.ID == "" || body.ConversationID == "" || body.Source == "" || body.Resource == "" {
		writeError(w, http.StatusBadRequest, `the body must be {"id", "conversationId", "source", "type"?, "resource", "intent"?}`)
		return
	}
	if strings.ContainsRune(body.ID+body.ConversationID+body.Source+body.Type+body.Resource+body.Intent, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	err := a.st.AddWatch(r.Context(), store.Watch{ID: body.ID, ConversationID: body.ConversationID, Intent: body.Intent,
		Filter: store.EventFilter{Source: body.Source, Type: body.Type, Resource: body.Resource}})
	a.created(w, err, "watch "+body.ID)
}

// created answers an insert: 201, 409 for an id taken, 404 for a
// conversation that does not exist.
func (a *App) created(w http.ResponseWriter, err error, what string) {
	switch {
	case errors.Is(err, store.ErrExists):
		writeError(w, http.StatusConflict, what+" exists")
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case err != nil:
		a.internalError(w, err)
	default:
		w.WriteHeader(http.StatusCreated)
	}
}
