package app

import (
	"encoding/json"
	"errors"
	"fmt"
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
