package app

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// report is GET /api/conversations/{id}: the event log as Junior's
// reporting API shows it.
func (a *App) report(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var conv store.Conversation
	if a.adminCaller(r) {
		// The admin bearer reads any conversation: those an automation
		// started, or a test loaded, have no participant.
		if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			writeError(w, http.StatusNotFound, "no such conversation")
			return
		}
		var err error
		if conv, err = a.st.Conversation(r.Context(), id); errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, err.Error())
			return
		} else if err != nil {
			a.internalError(w, err)
			return
		}
	} else {
		var ok bool
		if _, conv, ok = a.member(w, r); !ok {
			return
		}
	}
	events, err := a.st.Events(r.Context(), id)
	if err != nil {
		a.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversationId": id, "title": conv.Title, "forkedFrom": conv.ForkedFrom, "events": reportEvents(events)})
}

type reported struct {
	Seq       int            `json:"seq"`
	CreatedAt time.Time      `json:"createdAt"`
	Data      map[string]any `json:"data"`
}

type reportedCall struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Status     string          `json:"status"` // running, completed, error
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
}

func reportEvents(events []store.Event) []reported {
	var out []reported
	calls := map[string]*reportedCall{}
	for _, e := range events {
		var p map[string]any
		json.Unmarshal(e.Payload, &p)
		add := func(data map[string]any) { out = append(out, reported{e.Seq, e.CreatedAt, data}) }
		switch e.Type {
		case "message":
			d := map[string]any{"type": "message", "messageId": p["messageId"], "role": p["role"], "text": p["text"]}
			if m, ok := p["meta"].(map[string]any); ok {
				d["author"] = m["author"]
			}
			add(d)
		case "message_handled":
			add(map[string]any{"type": "message_handled", "messageId": p["messageId"]})
		case "turn_started":
			add(map[string]any{"type": "turn_lifecycle", "turnId": p["turnId"], "state": "started", "surface": p["surface"]})
		case "turn_completed":
			state := "succeeded"
			if p["outcome"] == "no_reply" {
				state = "no_reply"
			}
			add(map[string]any{"type": "turn_lifecycle", "turnId": p["turnId"], "state": state, "outcome": p["outcome"]})
		case "turn_failed":
			add(map[string]any{"type": "turn_lifecycle", "turnId": p["turnId"], "state": "failed", "failureKind": "agent", "failureCode": p["failureCode"]})
		case "turn_routed":
			add(map[string]any{"type": "turn_routed", "turnId": p["turnId"], "modelId": p["modelId"], "modelProfile": p["modelProfile"]})
		case "compaction":
			add(map[string]any{"type": "compaction", "summary": p["summary"]})
		case "assistant_message":
			m, _ := junior.ModelMessage(e)
			var pi store.Assistant
			json.Unmarshal([]byte(m), &pi)
			add(map[string]any{"type": "assistant_message", "text": junior.Text(pi), "stopReason": pi.StopReason})
			var cs []*reportedCall
			for _, c := range pi.Content {
				if c.Type == "toolCall" {
					rc := &reportedCall{ToolCallID: c.ID, Name: c.Name, Status: "running", Input: c.Arguments}
					calls[c.ID] = rc
					cs = append(cs, rc)
				}
			}
			if len(cs) > 0 {
				add(map[string]any{"type": "tool_calls", "calls": cs})
			}
		case "tool_result":
			m, _ := junior.ModelMessage(e)
			var res store.ToolResult
			json.Unmarshal([]byte(m), &res)
			if rc := calls[res.ToolCallID]; rc != nil {
				rc.Status = "completed"
				if res.IsError {
					rc.Status = "error"
				}
				var parts []string
				for _, c := range res.Content {
					parts = append(parts, c.Text)
				}
				rc.Output = strings.Join(parts, "\n")
			}
		}
	}
	return out
}

// pendingMessages is GET /api/conversations/{id}/pending-messages: the
// authorization a web turn waits for.
func (a *App) pendingMessages(w http.ResponseWriter, r *http.Request) {
	_, conv, ok := a.member(w, r)
	if !ok {
		return
	}
	id := conv.ID
	out := map[string]any{"messages": []any{}}
	if link, ok := a.turns.PendingAuthorization(id); ok {
		out["authorization"] = map[string]string{"authorizationUrl": link, "label": "Connect GitHub",
			"completionText": "GitHub is connected; the agent goes on."}
	}
	writeJSON(w, http.StatusOK, out)
}

// oauthCallback is GET /api/oauth/callback/{provider}: it stores the
// credential and resumes the turn that waited for it.
func (a *App) oauthCallback(w http.ResponseWriter, r *http.Request) {
	provider, state, code := r.PathValue("provider"), r.URL.Query().Get("state"), r.URL.Query().Get("code")
	if provider != "github" {
		writeError(w, http.StatusNotFound, "no OAuth provider "+provider)
		return
	}
	if state == "" || code == "" {
		writeError(w, http.StatusBadRequest, "the callback needs state and code")
		return
	}
	err := a.turns.CompleteAuthorization(r.Context(), provider, state, code)
	if errors.Is(err, turn.ErrNoAuthorization) {
		writeError(w, http.StatusNotFound, "no turn waits for authorization "+state+" (it completed, was stopped, or never was)")
		return
	}
	if err != nil {
		a.internalError(w, err) // the callback can be tried again
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "GitHub is connected. You can close this tab.")
}

// internal guards the heartbeat: the scheduler secret as a bearer.
func (a *App) internal(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !bearer(r, a.cfg.SchedulerSecret) {
			writeError(w, http.StatusUnauthorized, "send Authorization: Bearer $AGENT_SCHEDULER_SECRET")
			return
		}
		h(w, r)
	}
}

// admin guards the routes a test drives the agent with: off unless
// AGENT_ADMIN_SECRET is set, then that secret as a bearer.
func (a *App) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.AdminSecret == "" {
			writeError(w, http.StatusNotFound, "this route is off: set AGENT_ADMIN_SECRET to turn it on")
			return
		}
		if !a.adminCaller(r) {
			writeError(w, http.StatusUnauthorized, "send Authorization: Bearer $AGENT_ADMIN_SECRET")
			return
		}
		h(w, r)
	}
}

func (a *App) adminCaller(r *http.Request) bool {
	return a.cfg.AdminSecret != "" && bearer(r, a.cfg.AdminSecret)
}

func bearer(r *http.Request, secret string) bool {
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+secret)) == 1
}

// heartbeat is GET /api/internal/heartbeat: 202, then each due
// automation starts a turn that posts to its channel.
func (a *App) heartbeat(w http.ResponseWriter, r *http.Request) {
	a.goBackground(func(ctx context.Context) {
		due, err := a.st.TakeDue(ctx, time.Now())
		if err != nil {
			a.logf(slog.LevelError, "heartbeat: %v", err)
			return
		}
		for _, au := range due {
			run := time.Now().UnixMilli()
			id := fmt.Sprintf("local:scheduler:%s:%d", au.ID, run)
			msgID := fmt.Sprintf("scheduler-%s-%d", au.ID, run)
			src, _ := json.Marshal(map[string]any{"platform": "slack", "teamId": au.TeamID, "channelId": au.ChannelID})
			payload := map[string]any{"meta": map[string]any{"author": map[string]any{"isBot": true, "userName": "scheduler"}, "source": "scheduler"},
				"role": "user", "text": au.Task, "messageId": msgID}
			if _, err := a.st.Create(ctx, store.Conversation{ID: id, Source: "scheduler", SourceJS: src},
				junior.Message(msgID, payload)); err != nil {
				a.logf(slog.LevelError, "heartbeat: %v", err)
				continue
			}
			a.turns.Enqueue(id, turn.Input{MessageID: msgID, Text: au.Task, Surface: "scheduler", Payload: payload,
				Author: turn.Author{UserID: "scheduler", UserName: "scheduler", Platform: "system"},
				Place:  turn.Place{Channel: au.ChannelID, TeamID: au.TeamID}})
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted"})
}

// idle is GET /api/internal/idle: whether the agent has nothing to do (no
// queued input, no running turn, no background work). A turn waiting for
// an authorization or held in the queue does not count as work.
func (a *App) idle(w http.ResponseWriter, r *http.Request) {
	q := a.turns.Queue()
	a.mu.Lock()
	background := a.background
	a.mu.Unlock()
	busy := map[string]int{}
	for _, it := range q.Items {
		busy[it.Kind]++
	}
	// Inputs behind a turn that waits for an authorization wait with it.
	// A held queue, or a held paused turn, waits for the test: idle.
	paused := busy["paused"]
	if q.HoldPaused {
		paused = 0
	}
	idle := background == 0 && busy["running"] == 0 && (q.Held || busy["input"]+paused == 0)
	writeJSON(w, http.StatusOK, map[string]any{"idle": idle, "running": busy["running"], "queued": busy["input"] + busy["paused"],
		"background": background, "awaitingAuthorization": busy["awaiting_authorization"], "held": q.Held, "holdPaused": q.HoldPaused})
}

// queue is GET /api/internal/queue: what waits and what runs.
func (a *App) queue(w http.ResponseWriter, r *http.Request) {
	q := a.turns.Queue()
	if q.Items == nil {
		q.Items = []turn.QueueItem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"held": q.Held, "holdPaused": q.HoldPaused, "items": q.Items})
}

// holdQueue holds the queue (no queued input or paused turn starts), or
// with ?only=paused holds only paused turns; or releases both.
func (a *App) holdQueue(hold bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		only := r.URL.Query().Get("only")
		if only != "" && (only != "paused" || !hold) {
			writeError(w, http.StatusBadRequest, `only=paused holds paused turns alone; release lets everything go`)
			return
		}
		if hold {
			a.turns.Hold(only == "paused")
		} else {
			a.turns.Release()
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// conversations is GET /api/internal/conversations?since=RFC3339: the
// conversations made since then, for a test to find the one a heartbeat
// started.
func (a *App) conversations(w http.ResponseWriter, r *http.Request) {
	since, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("since"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "since must be an RFC 3339 time: "+err.Error())
		return
	}
	list, err := a.st.ConversationsSince(r.Context(), since)
	if err != nil {
		a.internalError(w, err)
		return
	}
	if list == nil {
		list = []store.Started{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

// addAutomation is POST /api/internal/automations: schedule a task that
// posts to a Slack channel, first due at nextRunAt (default now).
func (a *App) addAutomation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID              string    `json:"id"`
		TeamID          string    `json:"teamId"`
		ChannelID       string    `json:"channelId"`
		Task            string    `json:"task"`
		IntervalSeconds int       `json:"intervalSeconds"`
		NextRunAt       time.Time `json:"nextRunAt"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil ||
		body.ID == "" || body.ChannelID == "" || strings.TrimSpace(body.Task) == "" || body.IntervalSeconds <= 0 || body.IntervalSeconds > 366*86400 {
		writeError(w, http.StatusBadRequest, `the body must be {"id", "teamId", "channelId", "task", "intervalSeconds" (1 to a year), "nextRunAt"?}`)
		return
	}
	if strings.ContainsRune(body.ID+body.TeamID+body.ChannelID+body.Task, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	if body.NextRunAt.IsZero() {
		body.NextRunAt = time.Now()
	}
	err := a.st.AddAutomation(r.Context(), store.Automation{ID: body.ID, TeamID: body.TeamID, ChannelID: body.ChannelID,
		Task: body.Task, Interval: time.Duration(body.IntervalSeconds) * time.Second}, body.NextRunAt)
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
