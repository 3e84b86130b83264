package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/slackio"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// slackEvents is POST /api/webhooks/slack.
func (a *App) slackEvents(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "the body is unreadable or over 1 MiB: "+err.Error())
		return
	}
	if err := slackio.Verify(a.cfg.SlackSigningSecret, r.Header, body, time.Now()); err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	var env slackio.Envelope
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

// slackMessage takes a mention, a DM or a message in a thread the agent
// is in: it stores the message once (a mention arrives as app_mention and
// as message with one ts), reacts, and queues it.
func (a *App) slackMessage(ctx context.Context, env slackio.Envelope) {
	ev := env.Event
	if (ev.Type != "app_mention" && ev.Type != "message") || ev.BotID != "" || ev.User == "" ||
		(ev.Subtype != "" && ev.Subtype != "file_share") {
		return
	}
	thread := ev.Thread()
	id := "slack:" + ev.Channel + ":" + thread
	if ev.Type == "message" && ev.ChannelType != "im" {
		_, err := a.st.Conversation(ctx, id)
		if err != nil && !slackio.Mentions(ev.Text) {
			return // a channel message not for the agent
		}
	}
	info, err := a.slack.User(ctx, ev.User)
	if err != nil {
		a.logf(slog.LevelWarn, "slack event %s: users.info %s: %v", env.EventID, ev.User, err)
		return
	}
	if info.TeamID != "" && info.TeamID != env.TeamID {
		a.logf(slog.LevelWarn, "slack event %s: author %s is not in workspace %s", env.EventID, ev.User, env.TeamID)
		return
	}
	// Slack never sends a NUL; a forged one would only fail the insert.
	text := strings.TrimSpace(slackio.StripMentions(strings.ReplaceAll(ev.Text, "\x00", "")))
	au := turn.Author{UserID: ev.User, UserName: info.Name, FullName: info.RealName, TeamID: env.TeamID, Platform: "slack", Email: info.Profile.Email}
	src, _ := json.Marshal(map[string]any{"platform": "slack", "teamId": env.TeamID, "channelId": ev.Channel, "threadTs": thread, "messageTs": ev.TS})
	act, _ := json.Marshal(map[string]any{"platform": "slack", "email": info.Profile.Email, "slackUserId": ev.User, "slackUserName": info.Name, "fullName": info.RealName, "teamId": env.TeamID})
	payload := map[string]any{"meta": map[string]any{
		"author": map[string]any{"fullName": info.RealName, "isBot": false, "userId": ev.User, "userName": info.Name},
		"source": "slack", "slackTs": ev.TS, "explicitMention": ev.Type == "app_mention" || slackio.Mentions(ev.Text), "replied": false},
		"role": "user", "text": text, "messageId": ev.TS}
	seqs, err := a.st.Create(ctx, store.Conversation{ID: id, Source: "slack", SourceJS: src, Actor: act},
		junior.Message(ev.TS, payload))
	if err != nil {
		a.logf(slog.LevelError, "slack event %s: %v", env.EventID, err)
		return
	}
	if len(seqs) == 0 {
		return // stored already: the other copy of a mention
	}
	a.slack.React(ctx, ev.Channel, ev.TS, "eyes")
	in := turn.Input{MessageID: ev.TS, Text: text, Author: au, Surface: "slack", Place: turn.Place{Channel: ev.Channel, ThreadTS: thread, TeamID: env.TeamID}, Payload: payload}
	if strings.EqualFold(strings.Trim(text, " .!"), "stop") && a.turns.Stop(id, in) {
		return
	}
	a.turns.Enqueue(id, in)
	if seqs[0] == 0 {
		a.title(id, text) // the conversation's first message names it
	}
}
