package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// FaultKind names a fault.
type FaultKind string

// The faults the proxy injects.
const (
	// FaultRejectModelRequest answers a model request with a provider
	// error (Status: Anthropic 529 overloaded_error by default, or 500,
	// 429; OpenAI 503 by default, or 429, 500) in the dialect's error
	// shape, without sending it upstream.
	FaultRejectModelRequest FaultKind = "reject_model_request"
	// FaultCutStream ends the response body with an error after After
	// SSE events: the agent sees a stream cut mid-way.
	FaultCutStream FaultKind = "cut_stream"
	// FaultStallStream pauses the response for DelayMs (default 60 s)
	// after After SSE events.
	FaultStallStream FaultKind = "stall_stream"
	// FaultLatency waits DelayMs before the request is answered.
	FaultLatency FaultKind = "latency"
	// FaultLostAck lets the upstream get and answer the request, then
	// drops the agent's connection: the work is done, the agent does not
	// know it.
	FaultLostAck FaultKind = "lost_ack"
	// FaultSlackError answers the Slack method SlackMethod with
	// {"ok": false, "error": SlackError} and HTTP 200, as Slack does, or
	// with 429 and Retry-After when SlackError is "ratelimited".
	FaultSlackError FaultKind = "slack_error"
)

// Fault is a failure to inject into matching requests.
type Fault struct {
	ID   int64     `json:"id"`
	Kind FaultKind `json:"kind"`
	// Route (a rule name), Method and Path (a substring of the URL path)
	// select the requests; empty matches any.
	Route  string `json:"route,omitempty"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Times is how many matching requests get the fault: 0 means once,
	// -1 every one.
	Times int `json:"times,omitempty"`
	// Status is the HTTP status of a rejection.
	Status int `json:"status,omitempty"`
	// RetryAfterMs sets Retry-After (seconds, rounded up) and
	// retry-after-ms on a rejection or a Slack rate limit.
	RetryAfterMs int `json:"retryAfterMs,omitempty"`
	// After is the number of SSE events a cut or stalled stream sends.
	After int `json:"after,omitempty"`
	// DelayMs is the latency, or the length of a stall.
	DelayMs int `json:"delayMs,omitempty"`
	// SlackMethod and SlackError describe a Slack error.
	SlackMethod string `json:"slackMethod,omitempty"`
	SlackError  string `json:"slackError,omitempty"`
}

// faults is the queue of faults to inject.
type faults struct {
	mu     sync.Mutex
	list   []*Fault
	nextID int64
}

// errLostAck fails the agent's request after the upstream answered.
var errLostAck = errors.New("agentvcr proxy: fault lost_ack dropped the connection after the upstream answered")

// AddFault queues a fault and returns its id.
func (p *Proxy) AddFault(f Fault) (int64, error) {
	switch f.Kind {
	case FaultRejectModelRequest, FaultCutStream, FaultStallStream, FaultLatency, FaultLostAck:
	case FaultSlackError:
		if f.SlackMethod == "" || f.SlackError == "" {
			return 0, errors.New("fault slack_error needs slackMethod and slackError")
		}
	default:
		return 0, fmt.Errorf("unknown fault kind %q: use reject_model_request, cut_stream, stall_stream, latency, lost_ack or slack_error", f.Kind)
	}
	if f.Times == 0 {
		f.Times = 1
	}
	p.injected.mu.Lock()
	defer p.injected.mu.Unlock()
	p.injected.nextID++
	f.ID = p.injected.nextID
	p.injected.list = append(p.injected.list, &f)
	return f.ID, nil
}

// ClearFaults removes every queued fault.
func (p *Proxy) ClearFaults() {
	p.injected.mu.Lock()
	p.injected.list = nil
	p.injected.mu.Unlock()
}

// Faults returns the queued faults.
func (p *Proxy) Faults() []Fault {
	p.injected.mu.Lock()
	defer p.injected.mu.Unlock()
	out := make([]Fault, 0, len(p.injected.list))
	for _, f := range p.injected.list {
		out = append(out, *f)
	}
	return out
}

// takeFault returns the first fault for req (and route) that ok accepts,
// using up one of its times.
func (p *Proxy) takeFault(req *http.Request, route string, ok func(*Fault) bool) *Fault {
	p.injected.mu.Lock()
	defer p.injected.mu.Unlock()
	for i, f := range p.injected.list {
		if f.Route != "" && f.Route != route || f.Method != "" && !strings.EqualFold(f.Method, req.Method) ||
			f.Path != "" && !strings.Contains(req.URL.Path, f.Path) || !ok(f) {
			continue
		}
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				p.injected.list = append(p.injected.list[:i:i], p.injected.list[i+1:]...)
			}
		}
		c := *f
		return &c
	}
	return nil
}

func (p *Proxy) hasFaults() bool {
	p.injected.mu.Lock()
	defer p.injected.mu.Unlock()
	return len(p.injected.list) > 0
}

// rejection is a provider's error response for dialect d.
func (p *Proxy) rejection(req *http.Request, d wire.Dialect, f *Fault) *http.Response {
	status := f.Status
	var body any
	switch d {
	case wire.Anthropic:
		if status == 0 {
			status = 529
		}
		typ, msg := "overloaded_error", "Overloaded"
		switch status {
		case 429:
			typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
		case 500:
			typ, msg = "api_error", "Internal server error"
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_agentvcr_fault"}
	case wire.AISDK:
		if status == 0 {
			status = 503
		}
		typ := "internal_server_error"
		if status == 429 {
			typ = "rate_limit_exceeded"
		}
		body = map[string]any{"error": map[string]any{"message": "agentvcr fault: " + http.StatusText(status), "type": typ, "param": nil, "code": nil}, "generationId": nil}
	default:
		if status == 0 {
			status = 503
		}
		e := map[string]any{"message": "The engine is currently overloaded, please try again later.", "type": "server_error", "param": nil, "code": nil}
		switch status {
		case 429:
			e = map[string]any{"message": "Rate limit reached for requests. Please try again later.", "type": "requests", "param": nil, "code": "rate_limit_exceeded"}
		case 500:
			e["message"] = "The server had an error while processing your request."
		}
		body = map[string]any{"error": e}
	}
	b, _ := json.Marshal(body)
	resp := p.text(req, status, OutcomeFault, string(b))
	retryAfter(resp.Header, f.RetryAfterMs)
	return resp
}

func retryAfter(h http.Header, ms int) {
	if ms > 0 {
		h.Set("Retry-After", strconv.Itoa((ms+999)/1000))
		h.Set("Retry-After-Ms", strconv.Itoa(ms))
	}
}

// slackFault answers a Slack call with the fault's error.
func (p *Proxy) slackFault(req *http.Request, f *Fault) *http.Response {
	status, body := http.StatusOK, fmt.Sprintf(`{"ok":false,"error":%q}`, f.SlackError)
	if f.SlackError == "ratelimited" {
		status = http.StatusTooManyRequests
	}
	resp := p.text(req, status, OutcomeFault, body)
	resp.Header.Set("Content-Type", "application/json; charset=utf-8")
	if status == http.StatusTooManyRequests {
		ms := f.RetryAfterMs
		if ms == 0 {
			ms = 1000
		}
		retryAfter(resp.Header, ms)
	}
	return resp
}

// sleep waits d in the goroutine of ctx's request, or until the request
// ends. What the agent's connection holds back goes out first: nothing
// else sends it while the request waits (a paced replay, a stall, a
// latency fault).
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	flushTo(ctx)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// faultyBody cuts or stalls a response after a number of SSE events:
// the agent gets events 1 to After whole, then the cut, or the stall and
// then the rest.
type faultyBody struct {
	io.ReadCloser
	ctx     context.Context
	f       *Fault
	events  int
	prev    byte   // the last byte read, for event ends split across reads
	pending []byte // read past the last event before the fault, not sent yet
	tripped bool   // the fault's point was reached
	done    bool   // the fault happened (the cut, or the whole stall)
}

func (b *faultyBody) Read(buf []byte) (int, error) {
	if !b.done && !b.tripped && b.f.After <= 0 {
		b.tripped = true // nothing goes before the fault
	}
	if b.tripped && !b.done {
		b.done = true
		if b.f.Kind == FaultCutStream {
			return 0, io.ErrUnexpectedEOF
		}
		delay := time.Duration(b.f.DelayMs) * time.Millisecond
		if delay == 0 {
			delay = time.Minute
		}
		if err := sleep(b.ctx, delay); err != nil {
			return 0, err
		}
	}
	if b.done && b.f.Kind == FaultCutStream {
		return 0, io.ErrUnexpectedEOF
	}
	if len(b.pending) > 0 {
		n := copy(buf, b.pending)
		b.pending = b.pending[n:]
		return n, nil
	}
	n, err := b.ReadCloser.Read(buf)
	if b.done {
		return n, err
	}
	for i := 0; i < n; i++ {
		if buf[i] == '\n' && b.prev == '\n' {
			if b.events++; b.events >= b.f.After {
				// Event After is complete: it goes now, what follows it
				// after the fault.
				b.tripped = true
				b.pending = append(b.pending[:0], buf[i+1:n]...)
				if len(b.pending) == 0 && err != nil {
					return i + 1, err
				}
				return i + 1, nil
			}
		}
		if buf[i] != '\r' {
			b.prev = buf[i]
		}
	}
	return n, err
}
