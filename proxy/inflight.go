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
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

func (f *flights) add() {
	f.mu.Lock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
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

// Wait returns once no exchange is in flight: every response the proxy
// began has been written to its agent, or the agent hung up, and what it
// recorded is kept (Flush writes it). If ctx ends first, Wait says how
// many exchanges were left. A server that stops calls it after it stops
// accepting requests: http.Server.Shutdown does not wait for the
// intercepted connections, which it no longer tracks.
func (p *Proxy) Wait(ctx context.Context) error { return p.inflight.wait(ctx) }

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
