package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// signatureWindow is how old a signed Slack request may be.
const signatureWindow = 5 * time.Minute

// Sign returns the x-slack-signature of body at ts, for a client (a
// test, curl) that posts Slack events.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, "v0:"+strconv.FormatInt(ts, 10)+":")
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

type slackEnvelope struct {
	Type      string     `json:"type"`
	Challenge string     `json:"challenge"`
	TeamID    string     `json:"team_id"`
	EventID   string     `json:"event_id"`
	Event     slackEvent `json:"event"`
}

type slackEvent struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
}

// slackEvents is POST /api/webhooks/slack.
func (a *App) slackEvents(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "the body is unreadable or over 1 MiB: "+err.Error())
		return
	}
	ts, err := strconv.ParseInt(r.Header.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "x-slack-request-timestamp is missing or not Unix seconds")
		return
	}
	if age := time.Since(time.Unix(ts, 0)); age > signatureWindow || age < -signatureWindow {
		writeError(w, http.StatusUnauthorized, "x-slack-request-timestamp is outside the 5-minute window")
		return
	}
	if !hmac.Equal([]byte(Sign(a.cfg.SlackSigningSecret, ts, body)), []byte(r.Header.Get("X-Slack-Signature"))) {
		writeError(w, http.StatusUnauthorized, "x-slack-signature does not match the body")
		return
	}
	var env slackEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not a Slack event: "+err.Error())
		return
	}
	switch env.Type {
	case "url_verification":
		writeJSON(w, http.StatusOK, map[string]string{"challenge": env.Challenge})
		return
	case "event_callback":
		a.goBackground(func(ctx context.Context) { a.slackMessage(ctx, env) })
	}
	w.WriteHeader(http.StatusOK)
}

var mention = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// slackMessage takes a mention, a DM or a message in a thread the agent
// is in: it stores the message once (a mention arrives as app_mention and
// as message with one ts), reacts, and queues it.
func (a *App) slackMessage(ctx context.Context, env slackEnvelope) {
	ev := env.Event
	if (ev.Type != "app_mention" && ev.Type != "message") || ev.BotID != "" || ev.User == "" ||
		(ev.Subtype != "" && ev.Subtype != "file_share") {
		return
	}
	thread := ev.ThreadTS
	if thread == "" {
		thread = ev.TS
	}
	id := "slack:" + ev.Channel + ":" + thread
	if ev.Type == "message" && ev.ChannelType != "im" {
		_, err := a.st.Conversation(ctx, id)
		if err != nil && !mention.MatchString(ev.Text) {
			return // a channel message not for the agent
		}
	}
	info, err := a.slack.GetUserInfoContext(ctx, ev.User)
	if err != nil {
		a.logf(slog.LevelWarn, "slack event %s: users.info %s: %v", env.EventID, ev.User, err)
		return
	}
	if info.TeamID != "" && info.TeamID != env.TeamID {
		a.logf(slog.LevelWarn, "slack event %s: author %s is not in workspace %s", env.EventID, ev.User, env.TeamID)
		return
	}
	// Slack never sends a NUL; a forged one would only fail the insert.
	text := strings.TrimSpace(mention.ReplaceAllString(strings.ReplaceAll(ev.Text, "\x00", ""), ""))
	au := author{UserID: ev.User, UserName: info.Name, FullName: info.RealName, TeamID: env.TeamID, Platform: "slack", Email: info.Profile.Email}
	src, _ := json.Marshal(map[string]any{"platform": "slack", "teamId": env.TeamID, "channelId": ev.Channel, "threadTs": thread, "messageTs": ev.TS})
	act, _ := json.Marshal(map[string]any{"platform": "slack", "email": info.Profile.Email, "slackUserId": ev.User, "slackUserName": info.Name, "fullName": info.RealName, "teamId": env.TeamID})
	payload := map[string]any{"meta": map[string]any{
		"author": map[string]any{"fullName": info.RealName, "isBot": false, "userId": ev.User, "userName": info.Name},
		"source": "slack", "slackTs": ev.TS, "explicitMention": ev.Type == "app_mention" || mention.MatchString(ev.Text), "replied": false},
		"role": "user", "text": text, "messageId": ev.TS}
	seqs, err := a.st.Create(ctx, store.Conversation{ID: id, Source: "slack", SourceJS: src, Actor: act},
		store.Row{Type: "message", Key: "message:" + ev.TS, Payload: payload})
	if err != nil {
		a.logf(slog.LevelError, "slack event %s: %v", env.EventID, err)
		return
	}
	if len(seqs) == 0 {
		return // stored already: the other copy of a mention
	}
	a.slack.AddReactionContext(ctx, "eyes", slack.ItemRef{Channel: ev.Channel, Timestamp: ev.TS})
	in := input{MessageID: ev.TS, Text: text, Author: au, Surface: "slack", Place: place{Channel: ev.Channel, ThreadTS: thread, TeamID: env.TeamID}, Payload: payload}
	if strings.EqualFold(strings.Trim(text, " .!"), "stop") && a.stop(id, in) {
		return
	}
	a.enqueue(id, in)
	if seqs[0] == 0 {
		a.title(id, text) // the conversation's first message names it
	}
}
