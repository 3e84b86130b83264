package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// EventType names a progress event.
type EventType string

// The progress events, in the order a request has them.
const (
	// EventRequest: a request reached the proxy.
	EventRequest EventType = "request"
	// EventModelRequest: a model request is about to be answered. A hold
	// keeps it from going upstream (or being replayed).
	EventModelRequest EventType = "model_request"
	// EventResponse: the response's status and headers are in.
	EventResponse EventType = "response"
	// EventReply: the agent delivered a Slack message (chat.postMessage,
	// chat.update, chat.postEphemeral). A hold keeps Slack's answer from
	// the agent.
	EventReply EventType = "reply"
	// EventStream: a piece of the model's text.
	EventStream EventType = "stream_event"
	// EventToolRequest: the model asked for a tool, with its complete
	// arguments. A hold keeps the rest of the response, this call
	// included, from the agent.
	EventToolRequest EventType = "tool_request"
	// EventDone: the response ended; for a model, with its finish.
	EventDone EventType = "done"
	// EventError: the request failed, the provider sent an error, or the
	// stream was cut.
	EventError EventType = "error"
)

// Event is one step of a request, as the proxy saw it.
type Event struct {
	ID   int64     `json:"id"`
	Type EventType `json:"type"`
	Time time.Time `json:"time"`
	// Request numbers the request; all its events share it.
	Request int64 `json:"request"`
	// Route is the rule's name, or the origin when no rule matched.
	Route  string `json:"route"`
	Method string `json:"method"`
	// URL is the request's, redacted as the log and cassettes have it.
	URL string `json:"url"`
	// ElapsedMs is the time since the request reached the proxy.
	ElapsedMs float64 `json:"elapsedMs"`
	Status    int     `json:"status,omitempty"`
	// Outcome is what the proxy did with the request, as the response's
	// Header says (OutcomeOf): on a response event, "" when the header is
	// absent. A model request answered fault, refused or missed never
	// reached the provider.
	Outcome Outcome `json:"outcome,omitempty"`

	// Model and Purpose describe a model_request.
	Model   *wire.Request `json:"model,omitempty"`
	Purpose string        `json:"purpose,omitempty"`
	// ToolID, Name and Args describe a tool_request; Args is the
	// arguments object.
	ToolID string          `json:"toolId,omitempty"`
	Name   string          `json:"name,omitempty"`
	Args   json.RawMessage `json:"args,omitempty"`
	// Text is a reply's or a stream event's text; Channel and Thread
	// say where a reply went.
	Text    string `json:"text,omitempty"`
	Channel string `json:"channel,omitempty"`
	Thread  string `json:"thread,omitempty"`
	// Finish ends a model's done event.
	Finish *wire.Finish `json:"finish,omitempty"`
	// Error describes an error event.
	Error string `json:"error,omitempty"`
	// Held says the event waits for a release (control API).
	Held bool `json:"held,omitempty"`
}

// Handler is called with each event, in the order of the request's
// steps, in the request's goroutine, and the request waits until it
// returns. For model_request, tool_request and reply that wait is a hold:
// ctx ends when the agent gives up or the hold outlasts
// Proxy.HoldTimeout, and a handler that holds must return then; the
// request fails. Other events are not for holding: their handlers should
// return at once. Handlers of concurrent requests run concurrently.
type Handler func(ctx context.Context, ev Event)

// HoldExpiredError is the error of a request whose hold outlasted
// Proxy.HoldTimeout.
type HoldExpiredError struct {
	Event   EventType
	After   time.Duration
	Request string
}

func (e *HoldExpiredError) Error() string {
	return fmt.Sprintf("agentvcr proxy: a hold on %s for %s expired after %s without a release", e.Event, e.Request, e.After)
}

// events is the proxy's subscribers.
type events struct {
	mu      sync.Mutex
	subs    []subscription // in subscription order
	nextSub int64
	// handlers is subs, replaced on every change, so that requests read
	// it without the lock.
	handlers atomic.Pointer[[]subscription]
	nextID   atomic.Int64
}

type subscription struct {
	id int64
	h  Handler
	// holdTimeout bounds h's holds; 0 means Proxy.HoldTimeout.
	holdTimeout time.Duration
}

// Subscribe calls h with every event from now on, until the returned
// function is called.
func (p *Proxy) Subscribe(h Handler) (unsubscribe func()) { return p.SubscribeHolding(h, 0) }

// SubscribeHolding is Subscribe with a limit of h's own on its holds, in
// place of Proxy.HoldTimeout; 0 means Proxy.HoldTimeout. The control API
// gives each of its subscribers the limit it asks for.
func (p *Proxy) SubscribeHolding(h Handler, holdTimeout time.Duration) (unsubscribe func()) {
	e := &p.events
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextSub++
	id := e.nextSub
	e.subs = append(e.subs, subscription{id: id, h: h, holdTimeout: holdTimeout})
	e.publish()
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.subs = slices.DeleteFunc(e.subs, func(s subscription) bool { return s.id == id })
		e.publish()
	}
}

// publish replaces the handler list; e.mu is held.
func (e *events) publish() {
	list := slices.Clone(e.subs)
	e.handlers.Store(&list)
}

// list returns the current subscriptions.
func (e *events) list() []subscription {
	if l := e.handlers.Load(); l != nil {
		return *l
	}
	return nil
}

// DefaultClassify names a model request's purpose: "agent" when it
// offers tools, "structured" when it asks for JSON (routers, judges),
// "text" otherwise (titles, summaries).
func DefaultClassify(r wire.Request) string {
	switch {
	case len(r.Tools) > 0:
		return "agent"
	case r.Structured:
		return "structured"
	}
	return "text"
}

// observation is one request's progress.
type observation struct {
	p     *Proxy
	ctx   context.Context
	base  Event
	start time.Time
}

// emit hands ev to every subscriber in turn and waits for each.
func (o *observation) emit(ev Event) error {
	e := &o.p.events
	handlers := e.list()
	ev.ID = e.nextID.Add(1)
	ev.Time = time.Now()
	ev.Request, ev.Route, ev.Method, ev.URL = o.base.Request, o.base.Route, o.base.Method, o.base.URL
	ev.ElapsedMs = float64(ev.Time.Sub(o.start).Microseconds()) / 1000
	for _, s := range handlers {
		if err := o.deliver(s, ev); err != nil {
			return err
		}
	}
	return nil
}

// deliver runs s's handler in the request's goroutine. A handler that
// holds returns when its context ends; the hold then fails the request.
func (o *observation) deliver(s subscription, ev Event) error {
	if !holdable[ev.Type] {
		s.h(o.ctx, ev)
		return nil
	}
	flushTo(o.ctx) // the agent gets what came before while h holds
	limit := s.holdTimeout
	if limit == 0 {
		limit = o.p.c.holdTimeout
	}
	ctx, cancel := context.WithTimeout(o.ctx, limit)
	defer cancel()
	s.h(ctx, ev)
	if ctx.Err() == nil {
		return nil
	}
	if err := o.ctx.Err(); err != nil {
		return context.Cause(o.ctx)
	}
	return &HoldExpiredError{Event: ev.Type, After: limit, Request: ev.Method + " " + ev.URL}
}

// replyMethods are the Slack methods that deliver a message.
var replyMethods = []string{"/api/chat.postMessage", "/api/chat.update", "/api/chat.postEphemeral"}

// observe serves a request, reporting its progress to the subscribers.
func (p *Proxy) observe(req *http.Request) (*http.Response, error) {
	st := p.ruleOf(req)
	if len(p.events.list()) == 0 && !p.hasFaults() {
		return p.serve(req, st)
	}
	o := &observation{p: p, ctx: req.Context(), start: time.Now(), base: Event{
		Request: p.inflight.number(req), Method: req.Method, URL: redactedURL(req), Route: origin(req.URL)}}
	if st != nil {
		o.base.Route = st.rule.Name
	}
	fail := func(err error) (*http.Response, error) {
		o.emit(Event{Type: EventError, Error: err.Error()})
		status := http.StatusGatewayTimeout
		if !errors.As(err, new(*HoldExpiredError)) {
			status = statusClientClosed
		}
		return p.text(req, status, "", err.Error()+"\n"), nil
	}
	if err := o.emit(Event{Type: EventRequest}); err != nil {
		return fail(err)
	}
	dialect := dialectOf(req, st)
	isReply := req.Method == http.MethodPost && slices.ContainsFunc(replyMethods, func(m string) bool { return strings.HasSuffix(req.URL.Path, m) })
	var body []byte
	if dialect != "" || isReply {
		var err error
		if body, err = readBody(req); err != nil {
			o.emit(Event{Type: EventError, Error: err.Error()})
			return p.text(req, http.StatusBadRequest, "", "agentvcr proxy: cannot read the request body: "+err.Error()+"\n"), nil
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if dialect != "" {
		m := wire.ParseRequest(dialect, req.Header, body)
		if err := o.emit(Event{Type: EventModelRequest, Model: &m, Purpose: p.c.classify(m)}); err != nil {
			return fail(err)
		}
	}
	resp, err := p.serveFaulty(o, req, st, dialect)
	if err != nil {
		o.emit(Event{Type: EventError, Error: err.Error()})
		return resp, err
	}
	if err := o.emit(Event{Type: EventResponse, Status: resp.StatusCode, Outcome: OutcomeOf(resp)}); err != nil {
		resp.Body.Close()
		return fail(err)
	}
	if isReply {
		r := req.Clone(o.ctx)
		r.Body = io.NopCloser(bytes.NewReader(body))
		params, _, _ := wire.SlackParams(r)
		thread := params["thread_ts"]
		if thread == "" {
			thread = params["ts"]
		}
		if err := o.emit(Event{Type: EventReply, Status: resp.StatusCode, Text: params["text"], Channel: params["channel"], Thread: thread}); err != nil {
			resp.Body.Close()
			return fail(err)
		}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The body is the upgraded connection, carried as it is: the
		// exchange ends here.
		o.emit(Event{Type: EventDone})
		return resp, nil
	}
	ob := &observedBody{ReadCloser: resp.Body, o: o}
	if dialect != "" {
		ob.parser = wire.NewParser(dialect, resp.StatusCode, resp.Header.Get("Content-Type"), func(e wire.Event) { ob.pending = append(ob.pending, e) })
	}
	resp.Body = ob
	return resp, nil
}

// serveFaulty serves a request, injecting the faults queued for it.
func (p *Proxy) serveFaulty(o *observation, req *http.Request, st *ruleState, dialect wire.Dialect) (*http.Response, error) {
	route := o.base.Route
	kind := func(k FaultKind) func(*Fault) bool { return func(f *Fault) bool { return f.Kind == k } }
	if f := p.takeFault(req, route, kind(FaultLatency)); f != nil {
		if err := sleep(o.ctx, time.Duration(f.DelayMs)*time.Millisecond); err != nil {
			return nil, err
		}
	}
	if f := p.takeFault(req, route, func(f *Fault) bool {
		return f.Kind == FaultSlackError && strings.HasSuffix(req.URL.Path, "/api/"+f.SlackMethod)
	}); f != nil {
		return p.slackFault(req, f), nil
	}
	if dialect != "" {
		if f := p.takeFault(req, route, kind(FaultRejectModelRequest)); f != nil {
			return p.rejection(req, dialect, f), nil
		}
	}
	lost := p.takeFault(req, route, kind(FaultLostAck))
	resp, err := p.serve(req, st)
	if err != nil || resp == nil {
		return resp, err
	}
	if lost != nil {
		if resp.StatusCode != http.StatusSwitchingProtocols { // an upgraded body ends when the connection does
			io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		return nil, errLostAck
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, nil // no stream of the proxy's to cut or stall
	}
	if f := p.takeFault(req, route, func(f *Fault) bool { return f.Kind == FaultCutStream || f.Kind == FaultStallStream }); f != nil {
		resp.Body = &faultyBody{ReadCloser: resp.Body, ctx: o.ctx, f: f}
	}
	return resp, nil
}

// dialectOf returns the model dialect a request speaks: its rule's, or
// the one its path names. Only POSTs are model requests.
func dialectOf(req *http.Request, st *ruleState) wire.Dialect {
	if req.Method != http.MethodPost {
		return ""
	}
	if st != nil && st.rule.Dialect != "" {
		if st.rule.Dialect == "none" {
			return ""
		}
		return st.rule.Dialect
	}
	return wire.DialectOf(req.URL.Path)
}

// observedBody reports a response body's progress as the agent reads it.
// The events of the bytes a Read returns are emitted, and their holds
// kept, before that Read returns them.
type observedBody struct {
	io.ReadCloser
	o       *observation
	parser  *wire.Parser
	pending []wire.Event
	err     error // a hold that failed: the body ends with it
	ended   bool
	last    EventType // the last event emitted from the parser
}

func (b *observedBody) Read(buf []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(buf)
	if b.parser != nil && n > 0 {
		b.parser.Write(buf[:n])
		if herr := b.flush(); herr != nil {
			return 0, herr
		}
	}
	if err != nil {
		cause := ""
		if err != io.EOF {
			cause = err.Error()
		}
		b.end(cause)
	}
	return n, err
}

func (b *observedBody) Close() error {
	b.end("the agent closed the response before its end")
	return b.ReadCloser.Close()
}

// end emits the body's last events once.
func (b *observedBody) end(cause string) {
	if b.ended || b.err != nil {
		return
	}
	b.ended = true
	if b.parser != nil {
		b.parser.Close()
		b.flush()
		switch {
		case b.reported():
		case cause != "":
			b.o.emit(Event{Type: EventError, Error: cause})
		default:
			// A body the parser read to its end without a finish (a
			// stream cut by the provider) still ends: every request
			// gets its done or error event.
			b.o.emit(Event{Type: EventDone})
		}
		return
	}
	if cause != "" {
		b.o.emit(Event{Type: EventError, Error: cause})
		return
	}
	b.o.emit(Event{Type: EventDone})
}

// reported says the parser already ended the response (done or error).
func (b *observedBody) reported() bool { return b.last == EventDone || b.last == EventError }

// flush emits the parser's pending events. A hold that fails ends the
// body: the failure is reported, and Read returns it from then on.
func (b *observedBody) flush() error {
	for len(b.pending) > 0 {
		e := b.pending[0]
		b.pending = b.pending[1:]
		var ev Event
		switch e.Kind {
		case wire.KindText:
			ev = Event{Type: EventStream, Text: e.Text}
		case wire.KindToolCall:
			ev = Event{Type: EventToolRequest, ToolID: e.Tool.ID, Name: e.Tool.Name, Args: e.Tool.Args}
		case wire.KindFinish:
			ev = Event{Type: EventDone, Finish: e.Finish}
		case wire.KindError:
			ev = Event{Type: EventError, Status: e.Error.Status, Error: errorText(e.Error.Type, e.Error.Message)}
		}
		b.last = ev.Type
		if err := b.o.emit(ev); err != nil {
			b.pending = nil
			b.err = err
			b.o.emit(Event{Type: EventError, Error: err.Error()})
			return err
		}
	}
	return nil
}

// Holdable reports whether a Handler's wait on an event of type t is a
// hold: model_request, tool_request and reply.
func (t EventType) Holdable() bool { return holdable[t] }

// holdable are the events a handler can hold.
var holdable = map[EventType]bool{EventModelRequest: true, EventToolRequest: true, EventReply: true}

// errorText is an error event's text: its type and message, or the one
// of them there is (the proxy's own answers have a message only).
func errorText(typ, msg string) string {
	typ, msg = strings.TrimSpace(typ), strings.TrimSpace(msg)
	if typ == "" || msg == "" {
		return typ + msg
	}
	return typ + ": " + msg
}
