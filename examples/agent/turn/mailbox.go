package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
)

// Input is one message a turn answers.
type Input struct {
	MessageID string
	Text      string
	Author    Author
	Surface   string // api, slack, scheduler
	Place     Place
	Payload   map[string]any // the visible message row as written
}

// Author is who wrote an input.
type Author struct {
	Email, UserID, UserName, FullName, TeamID string
	Platform                                  string // web, slack, system
}

// Place is where a reply goes: a Slack channel and thread, or the web
// when it is zero.
type Place struct {
	Channel, ThreadTS, TeamID string
}

// mailbox is one conversation's queue: the inputs waiting for the next
// turn, a paused turn's rest, and the running turn.
type mailbox struct {
	id       string
	pending  []Input
	resume   *turnState // a paused turn, or one whose authorization completed
	running  *turnState
	parked   map[string]*turnState // by authorization id
	stopping []Input               // "stop" messages for the running turn
}

// Enqueue puts in into the conversation's mailbox and starts its worker
// unless one runs: the worker takes every input waiting then as one turn.
func (r *Runner) Enqueue(id string, in Input) {
	r.mu.Lock()
	b := r.box(id)
	b.pending = append(b.pending, in)
	r.changedLocked()
	r.mu.Unlock()
	r.kick(id)
}

// Changed returns a channel closed at the queue's next change: an input
// queued, a turn started, ended, paused, parked or resumed, the queue
// held or released. Whoever waits for the Runner to be idle reads Queue
// after taking the channel, and again when it closes.
func (r *Runner) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// changedLocked wakes the waiters of Changed; r.mu is held.
func (r *Runner) changedLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *Runner) box(id string) *mailbox {
	b := r.boxes[id]
	if b == nil {
		b = &mailbox{id: id, parked: map[string]*turnState{}}
		r.boxes[id] = b
	}
	return b
}

// kick starts the conversation's worker if it has work, none runs, and
// the queue is not held.
func (r *Runner) kick(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.boxes[id]
	if b == nil || b.running != nil || r.held || (b.resume == nil && len(b.pending) == 0) {
		return
	}
	if b.resume == nil && len(b.parked) > 0 {
		return // inputs wait behind the turn that waits for an authorization
	}
	if b.resume != nil && b.resume.paused && r.holdPaused {
		return // a paused turn waits to be let go; its inputs wait behind it
	}
	t := b.resume
	if t != nil {
		b.resume = nil
		t.paused = false
	} else {
		t = &turnState{conv: id, inputs: b.pending, turnID: junior.TurnID(b.pending[0].MessageID)}
		b.pending = nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.TurnTimeout)
	t.cancel = cancel
	b.running = t
	r.changedLocked()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		r.runTurn(ctx, t)
		r.mu.Lock()
		b.running = nil
		late := b.stopping // a stop that came as the turn ended anyway
		b.stopping = nil
		r.changedLocked()
		r.mu.Unlock()
		for _, in := range late {
			if err := r.append(id, junior.MessageHandled(in.MessageID)); err != nil {
				r.logf(slog.LevelError, "a stop message of %s: %v", id, err)
			}
		}
		r.kick(id)
	}()
}

// Stop cancels the conversation's running turn, or the one waiting for
// an authorization, with the stop message in as part of it, and says
// whether there was one.
func (r *Runner) Stop(id string, in Input) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.boxes[id]
	if b == nil {
		return false
	}
	if b.running != nil {
		b.stopping = append(b.stopping, in)
		b.running.stopped = true
		b.running.cancel()
		r.changedLocked()
		return true
	}
	for authz, t := range b.parked {
		if t.claimed {
			continue // its callback is storing the credential
		}
		// A turn waiting for an authorization stops too: it resumes only
		// to end as cancelled.
		delete(b.parked, authz)
		delete(r.pending, id)
		t.inputs = append(t.inputs, in)
		t.stopped = true
		b.resume = t
		r.changedLocked()
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.kick(id)
		}()
		return true
	}
	return false
}

// isStopped says whether a stop message ended t while it waited.
func (r *Runner) isStopped(t *turnState) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.stopped
}

// takeStopping says whether a stop message cancelled t, and adds the
// stop messages to its inputs, so that the cancelled turn handles them.
func (r *Runner) takeStopping(t *turnState) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.boxes[t.conv]
	t.inputs = append(t.inputs, b.stopping...)
	b.stopping = nil
	return t.stopped
}

// pause re-queues the rest of a turn past its slice.
func (r *Runner) pause(t *turnState) {
	r.mu.Lock()
	t.paused = true
	r.box(t.conv).resume = t
	r.changedLocked()
	r.mu.Unlock()
	r.logf(slog.LevelInfo, "turn %s paused after %d steps; its rest is queued", t.turnID, t.steps)
}

// park keeps a turn that waits for an authorization.
func (r *Runner) park(t *turnState, authorizationID string) {
	r.mu.Lock()
	r.box(t.conv).parked[authorizationID] = t
	r.changedLocked()
	r.mu.Unlock()
}

// ErrNoAuthorization is what CompleteAuthorization returns when no turn
// waits for the authorization: it completed, was stopped, or never was.
var ErrNoAuthorization = errors.New("no turn waits for this authorization")

// CompleteAuthorization stores the credential code for the user whose
// turn waits for authorizationID, and lets the turn go on. However many
// callbacks race, one completes it; the others get ErrNoAuthorization.
// If the credential cannot be stored the turn goes on waiting, and the
// callback can be tried again.
func (r *Runner) CompleteAuthorization(ctx context.Context, provider, authorizationID, code string) error {
	t := r.claimParked(authorizationID)
	if t == nil {
		return fmt.Errorf("authorization %s: %w", authorizationID, ErrNoAuthorization)
	}
	subject := t.inputs[0].Author.UserID
	err := r.st.SaveCredential(ctx, subject, provider, code)
	if err == nil {
		err = r.append(t.conv, junior.AuthorizationCompleted(provider, subject, authorizationID))
	}
	if err != nil {
		r.unclaim(t)
		return err
	}
	r.resume(t, authorizationID)
	return nil
}

// PendingAuthorization is the link the user of a web conversation must
// follow for its turn to go on, if its turn waits for one.
func (r *Runner) PendingAuthorization(conversationID string) (link string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pending[conversationID]
	return p.url, ok
}

// claimParked claims the turn waiting for authorizationID for its
// callback and returns it, or nil: one caller gets it however many
// callbacks race. The claimed turn stays parked, so its conversation's
// inputs still wait behind it, until resume or unclaim.
func (r *Runner) claimParked(authorizationID string) *turnState {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range r.boxes {
		if t := b.parked[authorizationID]; t != nil && !t.claimed {
			t.claimed = true
			return t
		}
	}
	return nil
}

// unclaim gives a claimed turn back to waiting, when its callback failed.
func (r *Runner) unclaim(t *turnState) {
	r.mu.Lock()
	t.claimed = false
	r.mu.Unlock()
}

// resume moves a claimed turn from parked to go on.
func (r *Runner) resume(t *turnState, authorizationID string) {
	r.mu.Lock()
	b := r.box(t.conv)
	delete(b.parked, authorizationID)
	delete(r.pending, t.conv)
	t.claimed = false
	b.resume = t
	r.changedLocked()
	r.mu.Unlock()
	r.kick(t.conv)
}

// QueueItem is one entry of the queue: what waits and what runs.
type QueueItem struct {
	ConversationID string   `json:"conversationId"`
	Kind           string   `json:"kind"` // input, paused, running, awaiting_authorization, waiting
	TurnID         string   `json:"turnId,omitempty"`
	MessageIDs     []string `json:"messageIds,omitempty"`
}

// Queue is a snapshot of the Runner's work.
type Queue struct {
	Items      []QueueItem
	Held       bool // no queued input or paused turn starts
	HoldPaused bool // paused turns wait; inputs go on
}

// Queue returns what waits and what runs now.
func (r *Runner) Queue() Queue {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := func(in []Input) []string {
		var out []string
		for _, i := range in {
			out = append(out, i.MessageID)
		}
		return out
	}
	q := Queue{Held: r.held, HoldPaused: r.holdPaused}
	for id, b := range r.boxes {
		if b.running != nil {
			// A stop message is the running turn's too: it ends with it.
			q.Items = append(q.Items, QueueItem{id, "running", b.running.turnID, append(ids(b.running.inputs), ids(b.stopping)...)})
		}
		if b.resume != nil {
			q.Items = append(q.Items, QueueItem{id, "paused", b.resume.turnID, ids(b.resume.inputs)})
		}
		if len(b.pending) > 0 {
			kind := "input"
			if len(b.parked) > 0 {
				kind = "waiting" // behind a turn that waits for an authorization
			}
			q.Items = append(q.Items, QueueItem{id, kind, "", ids(b.pending)})
		}
		for _, p := range b.parked {
			q.Items = append(q.Items, QueueItem{id, "awaiting_authorization", p.turnID, ids(p.inputs)})
		}
	}
	return q
}

// Hold holds the queue (no queued input or paused turn starts), or with
// onlyPaused only the turns that paused at their slice; Release lets
// everything go.
func (r *Runner) Hold(onlyPaused bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if onlyPaused {
		r.holdPaused = true
	} else {
		r.held = true
	}
	r.changedLocked()
}

// Release lets the held queue and paused turns go on.
func (r *Runner) Release() {
	r.mu.Lock()
	r.held, r.holdPaused = false, false
	r.changedLocked()
	var ids []string
	for id := range r.boxes {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.kick(id)
	}
}
