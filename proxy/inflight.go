package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// flights counts the exchanges whose responses are still being written,
// so that a proxy that stops can let them finish.
type flights struct {
	mu       sync.Mutex
	n        int
	idle     chan struct{} // closed when n drops to 0
	stopping bool          // no new exchange begins
}

// begin counts a new exchange in, unless the proxy is stopping.
func (f *flights) begin() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		return false
	}
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
	return true
}

func (f *flights) stop() {
	f.mu.Lock()
	f.stopping = true
	f.mu.Unlock()
}

func (f *flights) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 {
		close(f.idle)
	}
	f.mu.Unlock()
}

func (f *flights) wait(ctx context.Context) error {
	f.mu.Lock()
	n, idle := f.n, f.idle
	f.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		n = f.n
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		return fmt.Errorf("proxy: %d exchanges still in flight: %w", n, context.Cause(ctx))
	}
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

// track counts resp as in flight until its body is closed.
func (p *Proxy) track(resp *http.Response) {
	if resp.StatusCode == http.StatusSwitchingProtocols || resp.Body == nil {
		// An upgraded connection's body is the connection itself; it is
		// not wrapped, and not waited for.
		p.inflight.done()
		return
	}
	resp.Body = &closeOnce{ReadCloser: resp.Body, closed: p.inflight.done}
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
