package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// maxMemory bounds a memory's text: a memory is a fact, not a document.
const maxMemory = 4 << 10

// addMemory is POST /api/internal/memories: store a memory about a user
// ({"user": email, "text"}) or the workspace's ({"text"}), as the memory
// plugin would have learned it. It runs nothing: the memory is recalled
// in the next turns of that user (or of anyone).
func (a *App) addMemory(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User string `json:"user"`
		Text string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil ||
		strings.TrimSpace(body.Text) == "" || len(body.Text) > maxMemory || (body.User != "" && !strings.Contains(body.User, "@")) {
		writeError(w, http.StatusBadRequest, `the body must be {"user"?: an email, "text": up to 4 KiB}`)
		return
	}
	if strings.ContainsRune(body.User+body.Text, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	b := make([]byte, 12)
	rand.Read(b)
	m := store.Memory{ID: "mem_" + hex.EncodeToString(b), User: strings.TrimSpace(body.User), Content: strings.TrimSpace(body.Text), Source: "admin"}
	if _, err := a.st.AddMemory(r.Context(), m); err != nil {
		a.internalError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": m.ID})
}

// afterTurn starts the memory plugin's extraction after a turn of a
// person completed, when AGENT_MEMORY_EXTRACTION is on, as background
// work the idle route counts. It is called while the turn still runs, so
// the agent is never idle between the two.
func (a *App) afterTurn(c turn.Completed) {
	if !a.cfg.MemoryExtraction || c.Outcome != "success" || c.Author.Email == "" || a.ctx.Err() != nil {
		return
	}
	a.goBackground(func(ctx context.Context) { a.extractMemories(ctx, c) })
}

// extractMemories asks the fast model what of the turn is worth
// remembering, stores it, and records what it captured in the
// conversation, as Junior's memory plugin does (a structured_event
// memory/memories_captured). A failure is logged: the turn is over.
func (a *App) extractMemories(ctx context.Context, c turn.Completed) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var b strings.Builder
	b.WriteString("<conversation>\n")
	for _, in := range c.Inputs {
		b.WriteString("<user>" + in + "</user>\n")
	}
	b.WriteString("<assistant>" + c.Reply + "</assistant>\n</conversation>")
	found, err := a.gw.Extract(ctx, b.String())
	if err != nil {
		a.logf(slog.LevelWarn, "memories of %s: %v", c.TurnID, err)
		return
	}
	var captured []map[string]any
	for _, f := range found {
		text := strings.TrimSpace(strings.ReplaceAll(f.Text, "\x00", ""))
		if text == "" || len(text) > maxMemory {
			continue
		}
		m := store.Memory{ID: "mem_" + hash24(c.ConversationID, c.TurnID, text), Content: text, Source: "extraction", ConversationID: c.ConversationID}
		scope := "public"
		if f.About != "workspace" {
			m.User, scope = c.Author.Email, "private"
		}
		added, err := a.st.AddMemory(ctx, m)
		if err != nil {
			a.logf(slog.LevelWarn, "memories of %s: %v", c.TurnID, err)
			return
		}
		if added {
			captured = append(captured, map[string]any{"id": m.ID, "scope": scope, "content": text})
		}
	}
	if len(captured) == 0 {
		return
	}
	if _, err := a.st.Append(ctx, c.ConversationID, store.Row{Type: "structured_event", Key: "memory:" + c.TurnID + ":captured",
		Payload: map[string]any{"namespace": "memory", "name": "memories_captured", "version": 2, "turnId": c.TurnID,
			"content": map[string]any{"memories": captured}}}); err != nil {
		a.logf(slog.LevelWarn, "memories of %s: %v", c.TurnID, err)
	}
}
