package proxy

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// Flight is an exchange the proxy has begun and not finished: its request
// came in and its response is not yet written whole to the agent (or the
// agent has not hung up). A test waits for the agent to be quiet by
// waiting for none to be left.
type Flight struct {
	// Request numbers the request, as its progress events do.
	Request int64  `json:"request"`
	Method  string `json:"method"`
	// URL is redacted as cassettes store it.
	URL string `json:"url"`
	// Route is the rule's name, or the origin when no rule matched; Mode
	// is the rule's mode, empty when none matched.
	Route string `json:"route"`
	Mode  Mode   `json:"mode,omitempty"`
	// Started is when the request reached the proxy, ElapsedMs the time
	// since.
	Started   time.Time `json:"started"`
	ElapsedMs float64   `json:"elapsedMs"`
}

// flights keeps the exchanges whose responses are still being written,
// so that a proxy that stops can let them finish, and a test can see what
// is open.
type flights struct {
	mu       sync.Mutex
	open     map[int64]Flight
	next     int64
	idle     chan struct{} // closed when open empties
	stopping bool          // no new exchange begins
	// urls holds the URLs of recent exchanges, each with its redacted
	// form: an agent asks the same few URLs over and over, and redacting
	// one parses it and scans it for secret shapes.
	urls map[string]string
}

// maxURLs bounds flights.urls: an agent whose every URL is new (a query
// with the time in it) makes it start over each time it is full.
const maxURLs = 1024

// flightKey carries a request's *flight in its context, from onRequest
// to the round trip, the progress events and the log line.
type flightKey struct{}

// flight is what begin learns of a request, once: its number, its rule
// (nil when none matched) and its URL redacted.
type flight struct {
	n   int64
	st  *ruleState
	url string
}

// flightOf returns the flight begin gave req, or nil.
func flightOf(req *http.Request) *flight {
	fl, _ := req.Context().Value(flightKey{}).(*flight)
	return fl
}

// begin counts req in as a new exchange, unless the proxy is stopping,
// and returns it with its number in its context.
func (p *Proxy) begin(req *http.Request) (*http.Request, bool) {
	st := p.rule(req)
	f := &p.inflight
	raw := req.URL.String()
	f.mu.Lock()
	redacted, known := f.urls[raw]
	f.mu.Unlock()
	if !known {
		redacted = cassette.RedactURL(raw)
	}
	fl := Flight{Method: req.Method, URL: redacted, Route: origin(req.URL), Started: time.Now()}
	if st != nil {
		fl.Route, fl.Mode = st.rule.Name, st.mode(p.c.mode)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !known {
		if f.urls == nil || len(f.urls) >= maxURLs {
			f.urls = map[string]string{}
		}
		f.urls[raw] = redacted
	}
	if f.stopping {
		return req, false
	}
	if len(f.open) == 0 {
		f.idle = make(chan struct{})
	}
	if f.open == nil {
		f.open = map[int64]Flight{}
	}
	f.next++
	fl.Request = f.next
	f.open[fl.Request] = fl
	return req.WithContext(context.WithValue(req.Context(), flightKey{}, &flight{n: fl.Request, st: st, url: fl.URL})), true
}

// number returns the number begin gave req, or a new one for a request
// that did not come through begin.
func (f *flights) number(req *http.Request) int64 {
	if fl := flightOf(req); fl != nil {
		return fl.n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	return f.next
}

func (f *flights) stop() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
}

// done counts req's exchange out.
func (f *flights) done(req *http.Request) {
	var n int64
	if fl := flightOf(req); fl != nil {
		n = fl.n
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.open[n]; !ok {
		return
	}
	delete(f.open, n)
	if len(f.open) == 0 {
		close(f.idle)
	}
}

func (f *flights) wait(ctx context.Context) error {
	f.mu.Lock()
	n, idle := len(f.open), f.idle
	f.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		n = len(f.open)
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		return fmt.Errorf("proxy: %d exchanges still in flight: %w", n, context.Cause(ctx))
	}
}

// InFlight returns the exchanges in flight, oldest first: none when the
// agent is quiet at the proxy. A request counts from when it reaches the
// proxy until its response is written whole to the agent, or the agent
// hangs up; its done or error event comes before it stops counting, so a
// test that sees none left has seen every request's end. The control
// API's GET /v1/inflight answers the same.
func (p *Proxy) InFlight() []Flight {
	f := &p.inflight
	f.mu.Lock()
	out := make([]Flight, 0, len(f.open))
	for _, fl := range f.open {
		out = append(out, fl)
	}
	f.mu.Unlock()
	slices.SortFunc(out, func(a, b Flight) int { return cmp.Compare(a.Request, b.Request) })
	now := time.Now()
	for i := range out {
		out[i].ElapsedMs = float64(now.Sub(out[i].Started).Microseconds()) / 1000
	}
	return out
}

// Shutdown stops the proxy taking requests and waits for the exchanges in
// flight. A request that arrives after it is called, on a connection the
// agent holds open, gets 503 and the connection is closed. Shutdown
// returns once every response the proxy began has been written to its
// agent, or the agent hung up, and what it recorded is kept (Flush writes
// it); if ctx ends first, it says how many exchanges were left.
//
// Call it when the servers that serve the proxy stop: http.Server.Shutdown
// does not see the intercepted connections, which it no longer tracks.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.inflight.stop()
	return p.inflight.wait(ctx)
}

// track counts req's exchange as in flight until resp's body is closed.
func (p *Proxy) track(req *http.Request, resp *http.Response) {
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil {
		// An upgraded connection's body is the connection itself; it is
		// not wrapped, and not waited for.
		p.inflight.done(req)
		return
	}
	resp.Body = &closeOnce{ReadCloser: resp.Body, closed: func() { p.inflight.done(req) }}
}

// closeOnce calls closed after the first Close of its body.
type closeOnce struct {
	io.ReadCloser
	once   sync.Once
	closed func()
}

func (c *closeOnce) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.closed)
	return err
}
