package fixtureservice

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/judge"
)

// callSpec is the body of run, continue and fork.
type callSpec struct {
	ConversationID string      `json:"conversationId"`
	Input          *inputSpec  `json:"input"`
	History        []inputSpec `json:"history"`
	Criteria       *rubricSpec `json:"criteria"`
	Progress       bool        `json:"progress"`
	At             *forkPoint  `json:"at"`
}

// callState is a call under way: its stream of lines, and the progress
// events that wait for the client.
type callState struct {
	id string

	mu      sync.Mutex
	w       http.ResponseWriter
	enc     *json.Encoder
	ended   bool
	n       int                    // progress events so far
	waiting map[int]chan ackAnswer // progress events the client has not acknowledged
	actions fixture.Actions        // the call's, once a progress event has it
	over    chan struct{}          // closed when the call ends
}

type ackAnswer struct {
	Error string `json:"error"`
}

// line writes one line of the stream, unless the call has ended.
func (c *callState) line(v any) { c.write(v, false) }

// last writes the stream's last line: nothing follows it.
func (c *callState) last(v any) { c.write(v, true) }

func (c *callState) write(v any, last bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = last
	c.enc.Encode(v)
	if fl, ok := c.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// progressEvent is a progress event as the stream carries it.
type progressEvent struct {
	ID      int             `json:"id"`
	Type    string          `json:"type"`
	TurnID  string          `json:"turnId,omitempty"`
	Purpose string          `json:"purpose,omitempty"`
	Model   string          `json:"model,omitempty"`
	Name    string          `json:"name,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Text    string          `json:"text,omitempty"`
}

// progress is the call's OnProgress handler: it writes the event and
// waits until the client acknowledges it, the call ends or the client
// goes away.
func (c *callState) progress(clientGone <-chan struct{}) func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
	return func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		c.mu.Lock()
		if c.ended {
			c.mu.Unlock()
			return nil
		}
		c.actions = a
		c.n++
		n := c.n
		ack := make(chan ackAnswer, 1)
		c.waiting[n] = ack
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.waiting, n)
			c.mu.Unlock()
		}()
		c.line(map[string]any{"progress": progressEvent{ID: n, Type: p.Type, TurnID: p.TurnID, Purpose: p.Purpose,
			Model: p.Model, Name: p.Name, Args: p.Args, Text: p.Text}})
		select {
		case a := <-ack:
			if a.Error != "" {
				return errors.New(a.Error)
			}
			return nil
		case <-ctx.Done():
			return nil
		case <-c.over:
			return nil
		case <-clientGone:
			return errors.New("the client went away before it answered the event")
		}
	}
}

func (s *Service) run(w http.ResponseWriter, r *http.Request, e *entry) {
	s.call(w, r, e, "run")
}

func (s *Service) continue_(w http.ResponseWriter, r *http.Request, e *entry) {
	s.call(w, r, e, "continue")
}

func (s *Service) fork(w http.ResponseWriter, r *http.Request, e *entry) {
	s.call(w, r, e, "fork")
}

// call runs a Run, Continue or Fork and streams it.
func (s *Service) call(w http.ResponseWriter, r *http.Request, e *entry, op string) {
	var spec callSpec
	if !decode(w, r, &spec) {
		return
	}
	var (
		in   fixture.Input
		opts []fixture.CallOption
		conv *fixture.Conversation
		at   fixture.ForkPoint
		err  error
	)
	if op != "run" {
		conv = e.convs.get(spec.ConversationID)
		if conv == nil {
			writeError(w, http.StatusNotFound, "fixture "+e.id+" has no conversation "+strconv.Quote(spec.ConversationID))
			return
		}
	}
	switch op {
	case "fork":
		if spec.At == nil {
			writeError(w, http.StatusBadRequest, "at: the reply to fork at")
			return
		}
		if at, err = spec.At.point(); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	default:
		if spec.Input == nil {
			writeError(w, http.StatusBadRequest, "input: the input to send ("+inputKinds+")")
			return
		}
		if in, err = spec.Input.input(); err != nil {
			writeError(w, http.StatusBadRequest, "input: "+err.Error())
			return
		}
		if len(spec.History) > 0 {
			items, err := historyItems(spec.History)
			if err != nil {
				writeError(w, http.StatusBadRequest, err.Error())
				return
			}
			opts = append(opts, fixture.History(items...))
		}
		if spec.Criteria != nil {
			opts = append(opts, fixture.Criteria(spec.Criteria.rubric()))
		}
	}
	c := &callState{w: w, enc: json.NewEncoder(w), waiting: map[int]chan ackAnswer{}, over: make(chan struct{})}
	s.mu.Lock()
	c.id = s.id("c")
	s.calls[c.id] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, c.id)
		s.mu.Unlock()
	}()
	if spec.Progress && op != "fork" {
		opts = append(opts, fixture.OnProgress(c.progress(r.Context().Done())))
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	c.line(map[string]any{"call": c.id})
	var got *fixture.Conversation
	o := e.t.do(func() {
		switch op {
		case "run":
			got = e.f.Run(in, opts...)
		case "continue":
			got = conv.Continue(in, opts...)
		case "fork":
			got = conv.Fork(at)
		}
	})
	close(c.over)
	if o.returned {
		e.convs.put(got)
		c.last(map[string]any{"result": view(got), "failures": nonNil(o.failures)})
	} else {
		c.last(failure(op+" failed", o.failures, o.timeout))
	}
}

func (s *Service) callOf(w http.ResponseWriter, r *http.Request) *callState {
	s.mu.Lock()
	c := s.calls[r.PathValue("id")]
	s.mu.Unlock()
	if c == nil {
		writeError(w, http.StatusNotFound, "no call "+r.PathValue("id")+" is under way")
	}
	return c
}

// ack is POST /v1/calls/{id}/progress/{n}: the client's handler is done
// with event n; an error fails the fixture, as a Go handler's does.
func (s *Service) ack(w http.ResponseWriter, r *http.Request) {
	var a ackAnswer
	if !decode(w, r, &a) {
		return
	}
	c := s.callOf(w, r)
	if c == nil {
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	c.mu.Lock()
	ch, issued := c.waiting[n], err == nil && n >= 1 && n <= c.n
	c.mu.Unlock()
	switch {
	case !issued:
		writeError(w, http.StatusNotFound, "call "+c.id+" sent no progress event "+r.PathValue("n"))
		return
	case ch != nil:
		select {
		case ch <- a:
		default: // answered already
		}
	}
	// An event no longer waiting (its request gave up, or the call
	// moved on) takes the answer too: nothing waits for it.
	w.WriteHeader(http.StatusNoContent)
}

// send is POST /v1/calls/{id}/send: an input to the call's conversation,
// from a progress handler, answered when the app has it.
func (s *Service) send(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input inputSpec `json:"input"`
	}
	if !decode(w, r, &body) {
		return
	}
	c := s.callOf(w, r)
	if c == nil {
		return
	}
	in, err := body.Input.input()
	if err != nil {
		writeError(w, http.StatusBadRequest, "input: "+err.Error())
		return
	}
	c.mu.Lock()
	a := c.actions
	c.mu.Unlock()
	if a == nil {
		writeError(w, http.StatusConflict, "call "+c.id+" has no progress handler: send from one, while it handles an event")
		return
	}
	a.Send(in)
	w.WriteHeader(http.StatusNoContent)
}

// conversationView is a Conversation as the API answers it.
type conversationView struct {
	ID            string                 `json:"id"`
	Replies       []replyView            `json:"replies"`
	ToolCalls     []fixture.ToolCall     `json:"toolCalls"`
	Reactions     []string               `json:"reactions"`
	Turns         []turnView             `json:"turns"`
	Scores        []scoreView            `json:"scores"`
	Transcript    string                 `json:"transcript"`
	Earlier       string                 `json:"earlier"`
	ModelRequests []fixture.ModelRequest `json:"modelRequests"`
}

type replyView struct {
	MessageID string `json:"messageId"`
	Text      string `json:"text"`
}

type turnView struct {
	ID        string             `json:"id"`
	Status    string             `json:"status"`
	Outcome   string             `json:"outcome"`
	Replies   []replyView        `json:"replies"`
	ToolCalls []fixture.ToolCall `json:"toolCalls"`
}

type scoreView struct {
	Judge           string        `json:"judge"`
	Verdict         judge.Verdict `json:"verdict"`
	ThresholdFailed bool          `json:"thresholdFailed"`
}

func replies(rs []fixture.Reply) []replyView {
	out := []replyView{}
	for _, r := range rs {
		out = append(out, replyView{MessageID: r.MessageID, Text: r.Text})
	}
	return out
}

func view(c *fixture.Conversation) conversationView {
	v := conversationView{ID: c.ID, Replies: replies(c.Replies), ToolCalls: nonNil(c.ToolCalls), Reactions: nonNil(c.Reactions),
		Turns: []turnView{}, Scores: []scoreView{}, Transcript: c.Transcript, Earlier: c.Earlier, ModelRequests: nonNil(c.ModelRequests)}
	for _, t := range c.Turns {
		v.Turns = append(v.Turns, turnView{ID: t.ID, Status: t.Status, Outcome: t.Outcome, Replies: replies(t.Replies), ToolCalls: nonNil(t.ToolCalls)})
	}
	for _, s := range c.Scores {
		v.Scores = append(v.Scores, scoreView{Judge: s.Judge, Verdict: s.Verdict, ThresholdFailed: s.Failed})
	}
	return v
}

// setup runs a setup call of the fixture (an insert, a fault) and
// answers 204, or 422 with its failures.
func setup(w http.ResponseWriter, e *entry, f func()) {
	o := e.t.do(f)
	if !o.returned {
		writeFailure(w, http.StatusUnprocessableEntity, "fixture "+e.id, o.failures, o.timeout)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"failures": nonNil(o.failures)})
}

func (s *Service) insertScheduledAutomation(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		ID          string `json:"id"`
		Task        string `json:"task"`
		Destination *struct {
			Channel string `json:"channel"`
			DM      string `json:"dm"`
			Web     string `json:"web"`
		} `json:"destination"`
		EverySeconds int64      `json:"everySeconds"`
		NextRun      *time.Time `json:"nextRun"`
	}
	if !decode(w, r, &b) {
		return
	}
	a := fixture.ScheduledAutomation{ID: b.ID, Task: b.Task, Every: time.Duration(b.EverySeconds) * time.Second}
	if b.NextRun != nil {
		a.NextRun = *b.NextRun
	}
	if d := b.Destination; d != nil {
		switch {
		case d.Channel != "" && d.DM == "" && d.Web == "":
			a.Destination = fixture.ChannelDestination(d.Channel)
		case d.DM != "" && d.Channel == "" && d.Web == "":
			a.Destination = fixture.DMDestination(d.DM)
		case d.Web != "" && d.Channel == "" && d.DM == "":
			a.Destination = fixture.WebDestination(d.Web)
		default:
			writeError(w, http.StatusBadRequest, "destination: one of channel (a Slack channel id), dm (a Slack user id) or web (an email)")
			return
		}
	}
	setup(w, e, func() { e.f.InsertScheduledAutomation(a) })
}

type filterSpec struct {
	Source   string `json:"source"`
	Type     string `json:"type"`
	Resource string `json:"resource"`
}

func (f filterSpec) filter() fixture.EventFilter {
	return fixture.EventFilter{Source: f.Source, Type: f.Type, Resource: f.Resource}
}

func (s *Service) insertEventAutomation(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		ID   string     `json:"id"`
		Task string     `json:"task"`
		On   filterSpec `json:"on"`
	}
	if !decode(w, r, &b) {
		return
	}
	setup(w, e, func() { e.f.InsertEventAutomation(b.ID, b.Task, b.On.filter()) })
}

func (s *Service) insertWatch(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		ConversationID string     `json:"conversationId"`
		On             filterSpec `json:"on"`
		Intent         string     `json:"intent"`
	}
	if !decode(w, r, &b) {
		return
	}
	conv := e.convs.get(b.ConversationID)
	if conv == nil {
		writeError(w, http.StatusNotFound, "fixture "+e.id+" has no conversation "+strconv.Quote(b.ConversationID))
		return
	}
	setup(w, e, func() { e.f.InsertWatch(conv, b.On.filter(), b.Intent) })
}

func (s *Service) insertMemory(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		User string `json:"user"`
		Text string `json:"text"`
	}
	if !decode(w, r, &b) {
		return
	}
	setup(w, e, func() { e.f.InsertMemory(fixture.Memory{User: b.User, Text: b.Text}) })
}

func (s *Service) insertCredential(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		User      string `json:"user"`
		SlackUser string `json:"slackUser"`
		Provider  string `json:"provider"`
		Token     string `json:"token"`
	}
	if !decode(w, r, &b) {
		return
	}
	setup(w, e, func() {
		e.f.InsertCredential(fixture.Credential{User: b.User, SlackUser: b.SlackUser, Provider: b.Provider, Token: b.Token})
	})
}

// fault is POST /v1/fixtures/{id}/faults: a third party fails as it
// fails in production.
func (s *Service) fault(w http.ResponseWriter, r *http.Request, e *entry) {
	var b struct {
		Kind         string `json:"kind"`
		Method       string `json:"method"`
		Code         string `json:"code"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}
	if !decode(w, r, &b) {
		return
	}
	switch b.Kind {
	case "rejectNextModelRequest":
		setup(w, e, e.f.RejectNextModelRequest)
	case "slackError":
		setup(w, e, func() { e.f.QueueSlackError(b.Method, b.Code) })
	case "slackRateLimit":
		setup(w, e, func() { e.f.QueueSlackRateLimit(b.Method, time.Duration(b.RetryAfterMs)*time.Millisecond) })
	default:
		writeError(w, http.StatusBadRequest, "kind "+strconv.Quote(b.Kind)+": use rejectNextModelRequest, slackError or slackRateLimit")
	}
}
