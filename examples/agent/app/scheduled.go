package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// destination is where a scheduled automation's runs go: a Slack channel
// ({"platform": "slack", "teamId", "channelId"}; a DM is the channel of
// the DM), or a user's web conversations ({"platform": "web", "email"}).
type destination struct {
	Platform  string `json:"platform"`
	TeamID    string `json:"teamId"`
	ChannelID string `json:"channelId"`
	Email     string `json:"email"`
}

// addAutomation is POST /api/internal/automations: schedule a task to
// its destination every intervalSeconds, first due at nextRunAt (default
// now). It runs nothing: a heartbeat runs what is due.
func (a *App) addAutomation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID              string      `json:"id"`
		Task            string      `json:"task"`
		Destination     destination `json:"destination"`
		IntervalSeconds int         `json:"intervalSeconds"`
		NextRunAt       time.Time   `json:"nextRunAt"`
	}
	d := &body.Destination
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil ||
		body.ID == "" || strings.TrimSpace(body.Task) == "" || body.IntervalSeconds <= 0 || body.IntervalSeconds > 366*86400 ||
		!(d.Platform == "slack" && d.ChannelID != "" && d.Email == "" || d.Platform == "web" && strings.Contains(d.Email, "@") && d.ChannelID == "") {
		writeError(w, http.StatusBadRequest, `the body must be {"id", "task", "intervalSeconds" (1 to a year), "nextRunAt"?, `+
			`"destination": {"platform": "slack", "teamId", "channelId"} or {"platform": "web", "email"}}`)
		return
	}
	if strings.ContainsRune(body.ID+body.Task+d.TeamID+d.ChannelID+d.Email, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	if body.NextRunAt.IsZero() {
		body.NextRunAt = time.Now()
	}
	err := a.st.AddAutomation(r.Context(), store.Automation{ID: body.ID, TeamID: d.TeamID, ChannelID: d.ChannelID,
		WebUser: strings.ToLower(strings.TrimSpace(d.Email)), Task: body.Task, Interval: time.Duration(body.IntervalSeconds) * time.Second}, body.NextRunAt)
	if errors.Is(err, store.ErrExists) {
		writeError(w, http.StatusConflict, "automation "+body.ID+" exists")
		return
	}
	if err != nil {
		a.internalError(w, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// runAutomation starts a run of au: a conversation with the task as the
// scheduler's message, and a turn that answers it in au's destination. A
// Slack run posts to its channel; a web run is a new web conversation of
// its user, which they read and continue as their own.
func (a *App) runAutomation(ctx context.Context, au store.Automation) {
	run := time.Now().UnixMilli()
	msgID := fmt.Sprintf("scheduler-%s-%d", au.ID, run)
	payload := map[string]any{"meta": map[string]any{"author": map[string]any{"isBot": true, "userName": "scheduler"}, "source": "scheduler"},
		"role": "user", "text": au.Task, "messageId": msgID}
	in := turn.Input{MessageID: msgID, Text: au.Task, Surface: "scheduler", Payload: payload,
		Author: turn.Author{UserID: "scheduler", UserName: "scheduler", Platform: "system"}}
	var conv store.Conversation
	if au.WebUser != "" {
		id := "local:web:" + hash24(au.WebUser, fmt.Sprintf("automation:%s:%d", au.ID, run))
		src, _ := json.Marshal(map[string]any{"platform": "web", "conversationId": id, "visibility": "private"})
		act, _ := json.Marshal(map[string]any{"email": au.WebUser, "fullName": strings.SplitN(au.WebUser, "@", 2)[0]})
		conv = store.Conversation{ID: id, Source: "web", SourceJS: src, Actor: act}
	} else {
		src, _ := json.Marshal(map[string]any{"platform": "slack", "teamId": au.TeamID, "channelId": au.ChannelID})
		conv = store.Conversation{ID: fmt.Sprintf("local:scheduler:%s:%d", au.ID, run), Source: "scheduler", SourceJS: src}
		in.Place = turn.Place{Channel: au.ChannelID, TeamID: au.TeamID}
	}
	if _, err := a.st.Create(ctx, conv, junior.Message(msgID, payload)); err != nil {
		a.logf(slog.LevelError, "heartbeat: automation %s: %v", au.ID, err)
		return
	}
	a.turns.Enqueue(conv.ID, in)
}
