package app

import (
	"context"
	"log/slog"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// input is one message a turn answers.
type input struct {
	MessageID string
	Text      string
	Author    author
	Surface   string // api, slack, scheduler
	Place     place
	Payload   map[string]any // the visible message row as written
}

// author is who wrote an input.
type author struct {
	Email, UserID, UserName, FullName, TeamID string
	Platform                                  string // web, slack, system
}

// place is where a reply goes: a Slack channel and thread, or the web.
type place struct {
	Channel, ThreadTS, TeamID string
}

// mailbox is one conversation's queue: the inputs waiting for the next
// turn, a paused turn's rest, and the running turn.
type mailbox struct {
	id       string
	pending  []input
	resume   *turnState // a paused turn, or one whose authorization completed
	running  *turnState
	parked   map[string]*turnState // by authorization id
	stopping []input               // "stop" messages for the running turn
}

// enqueue puts in into the conversation's mailbox and starts its worker
// unless one runs.
func (a *App) enqueue(id string, in input) {
	a.mu.Lock()
	b := a.box(id)
	b.pending = append(b.pending, in)
	a.mu.Unlock()
	a.kick(id)
}

func (a *App) box(id string) *mailbox {
	b := a.boxes[id]
	if b == nil {
		b = &mailbox{id: id, parked: map[string]*turnState{}}
		a.boxes[id] = b
	}
	return b
}

// kick starts the conversation's worker if it has work, none runs, and
// the queue is not held.
func (a *App) kick(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.boxes[id]
	if b == nil || b.running != nil || a.held || (b.resume == nil && len(b.pending) == 0) {
		return
	}
	if b.resume == nil && len(b.parked) > 0 {
		return // inputs wait behind the turn that waits for an authorization
	}
	if b.resume != nil && b.resume.paused && a.holdPaused {
		return // a paused turn waits to be let go; its inputs wait behind it
	}
	t := b.resume
	if t != nil {
		b.resume = nil
		t.paused = false
	} else {
		t = &turnState{conv: id, inputs: b.pending, turnID: turnID(b.pending[0].MessageID)}
		b.pending = nil
	}
	ctx, cancel := context.WithTimeout(a.ctx, a.cfg.TurnTimeout)
	t.cancel = cancel
	b.running = t
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer cancel()
		a.runTurn(ctx, t)
		a.mu.Lock()
		b.running = nil
		late := b.stopping // a stop that came as the turn ended anyway
		b.stopping = nil
		a.mu.Unlock()
		for _, in := range late {
			a.append(id, store.Row{Type: "message_handled", Key: "message:" + in.MessageID + ":handled", Payload: map[string]any{"messageId": in.MessageID}})
		}
		a.kick(id)
	}()
}

// stop cancels the conversation's running turn, if any, with the stop
// message as part of it, and says whether there was one.
func (a *App) stop(id string, in input) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.boxes[id]
	if b == nil {
		return false
	}
	if b.running != nil {
		b.stopping = append(b.stopping, in)
		b.running.stopped = true
		b.running.cancel()
		return true
	}
	for authz, t := range b.parked {
		if t.claimed {
			continue // its callback is storing the credential
		}
		// A turn waiting for an authorization stops too: it resumes only
		// to end as cancelled.
		delete(b.parked, authz)
		delete(a.pending, id)
		t.inputs = append(t.inputs, in)
		t.stopped = true
		b.resume = t
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.kick(id)
		}()
		return true
	}
	return false
}

// isStopped says whether a stop message ended t while it waited.
func (a *App) isStopped(t *turnState) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return t.stopped
}

// takeStopping says whether a stop message cancelled t, and adds the
// stop messages to its inputs, so that the cancelled turn handles them.
func (a *App) takeStopping(t *turnState) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.boxes[t.conv]
	t.inputs = append(t.inputs, b.stopping...)
	b.stopping = nil
	return t.stopped
}

// pause re-queues the rest of a turn past its slice.
func (a *App) pause(t *turnState) {
	a.mu.Lock()
	t.paused = true
	a.box(t.conv).resume = t
	a.mu.Unlock()
	a.logf(slog.LevelInfo, "turn %s paused after %d steps; its rest is queued", t.turnID, t.steps)
}

// park keeps a turn that waits for an authorization.
func (a *App) park(t *turnState, authorizationID string) {
	a.mu.Lock()
	a.box(t.conv).parked[authorizationID] = t
	a.mu.Unlock()
}

// claimParked claims the turn waiting for authorizationID for its
// callback and returns it, or nil: one caller gets it however many
// callbacks race. The claimed turn stays parked, so its conversation's
// inputs still wait behind it, until resume or unclaim.
func (a *App) claimParked(authorizationID string) *turnState {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.boxes {
		if t := b.parked[authorizationID]; t != nil && !t.claimed {
			t.claimed = true
			return t
		}
	}
	return nil
}

// unclaim gives a claimed turn back to waiting, when its callback failed.
func (a *App) unclaim(t *turnState) {
	a.mu.Lock()
	t.claimed = false
	a.mu.Unlock()
}

// resume moves a claimed turn from parked to go on.
func (a *App) resume(t *turnState, authorizationID string) {
	a.mu.Lock()
	b := a.box(t.conv)
	delete(b.parked, authorizationID)
	delete(a.pending, t.conv)
	t.claimed = false
	b.resume = t
	a.mu.Unlock()
	a.kick(t.conv)
}

// queueItem is one entry of the internal queue route.
type queueItem struct {
	ConversationID string   `json:"conversationId"`
	Kind           string   `json:"kind"` // input, paused, running, awaiting_authorization, waiting
	TurnID         string   `json:"turnId,omitempty"`
	MessageIDs     []string `json:"messageIds,omitempty"`
}

func (a *App) snapshot() (items []queueItem, held, holdPaused bool, busy int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := func(in []input) []string {
		var out []string
		for _, i := range in {
			out = append(out, i.MessageID)
		}
		return out
	}
	for id, b := range a.boxes {
		if b.running != nil {
			// A stop message is the running turn's too: it ends with it.
			items = append(items, queueItem{id, "running", b.running.turnID, append(ids(b.running.inputs), ids(b.stopping)...)})
		}
		if b.resume != nil {
			items = append(items, queueItem{id, "paused", b.resume.turnID, ids(b.resume.inputs)})
		}
		if len(b.pending) > 0 {
			kind := "input"
			if len(b.parked) > 0 {
				kind = "waiting" // behind a turn that waits for an authorization
			}
			items = append(items, queueItem{id, kind, "", ids(b.pending)})
		}
		for _, p := range b.parked {
			items = append(items, queueItem{id, "awaiting_authorization", p.turnID, ids(p.inputs)})
		}
	}
	return items, a.held, a.holdPaused, a.background
}
