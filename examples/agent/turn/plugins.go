package turn

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// Completed is a turn that completed with a reply, as a plugin that
// learns from turns reads it.
type Completed struct {
	ConversationID, TurnID string
	// Author wrote the turn's first input.
	Author Author
	// Inputs are the texts the turn answered; Reply is its reply.
	Inputs  []string
	Reply   string
	Outcome string // success, cancelled
}

// completed tells AfterTurn of t.
func (r *Runner) completed(t *turnState, reply, outcome string) {
	if r.cfg.AfterTurn == nil {
		return
	}
	c := Completed{ConversationID: t.conv, TurnID: t.turnID, Author: t.inputs[0].Author, Reply: reply, Outcome: outcome}
	for _, in := range t.inputs {
		c.Inputs = append(c.Inputs, in.Text)
	}
	r.cfg.AfterTurn(c)
}

// recallLimit is how many memories a turn's context holds at most: the
// newest.
const recallLimit = 20

// recall puts the memories the turn's author and the workspace have into
// the turn's context, as the memory plugin does: a turn_context row that
// says which, and a context message the model reads before the
// instruction. A turn with no memory to recall writes neither.
func (r *Runner) recall(t *turnState, first Input) error {
	ms, err := r.st.Recall(r.ctx, first.Author.Email, recallLimit)
	if err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	if len(ms) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("<memories>\nWhat you remember from earlier conversations. Use it when it helps; it may be out of date.\n")
	var recalled []map[string]any
	for _, m := range ms {
		scope := "public"
		if m.User != "" {
			scope = "private"
		}
		fmt.Fprintf(&b, "- %s\n", xmlEscape(m.Content))
		recalled = append(recalled, map[string]any{"id": m.ID, "scope": scope, "content": m.Content})
	}
	b.WriteString("</memories>")
	return r.append(t.conv,
		store.Row{Type: "turn_context", Payload: map[string]any{"turnId": t.turnID, "pluginName": "memory", "kind": "recalled_memories",
			"version": 1, "content": map[string]any{"memories": recalled}}},
		junior.ContextMessage(b.String(), time.Now().UnixMilli()))
}
