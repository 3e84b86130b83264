package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/elazarl/goproxy"
)

// errClientGone cancels the requests of a client connection that closed.
var errClientGone = errors.New("agentvcr proxy: the agent closed its connection")

// connKey is the context key of a CONNECT request's *watch.
type connKey struct{}

// watch is a context ended when the agent's tunnelled connection closes.
// net/http stops watching a connection once goproxy hijacks it for TLS
// interception, so without this a request held by a progress handler
// would not learn that the agent gave up.
type watch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// watchConnect prepares a CONNECT request for its hijack to be watched.
func watchConnect(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	hj, ok := w.(http.Hijacker)
	if r.Method != http.MethodConnect || !ok {
		return w, r
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	wt := &watch{ctx: ctx, cancel: cancel}
	return &watchedWriter{ResponseWriter: w, hj: hj, watch: wt}, r.WithContext(context.WithValue(r.Context(), connKey{}, wt))
}

// watchOf returns the watch goproxy carries from the CONNECT to the
// requests inside it, or nil.
func watchOf(ctx *goproxy.ProxyCtx) *watch {
	wt, _ := ctx.UserData.(*watch)
	return wt
}

// bind makes req's context end when the watched connection closes.
func (wt *watch) bind(req *http.Request) *http.Request {
	if wt == nil {
		return req
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(wt.ctx, func() { cancel(errClientGone) })
	context.AfterFunc(ctx, func() { stop() })
	return req.WithContext(ctx)
}

type watchedWriter struct {
	http.ResponseWriter
	hj    http.Hijacker
	watch *watch
}

func (w *watchedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack returns the connection with a reader that reads ahead, so that
// the agent closing it is seen even while nothing else reads.
func (w *watchedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := w.hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	c := &readAheadConn{Conn: conn}
	c.cond = sync.NewCond(&c.mu)
	go c.fill(rw.Reader, w.watch.cancel)
	return c, bufio.NewReadWriter(bufio.NewReader(c), rw.Writer), nil
}

// readAheadConn reads its connection in the background into a buffer of
// at most readAhead bytes.
type readAheadConn struct {
	net.Conn
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	err    error
	closed bool
}

const readAhead = 1 << 20

func (c *readAheadConn) fill(r io.Reader, gone context.CancelCauseFunc) {
	b := make([]byte, 32<<10)
	for {
		n, err := r.Read(b)
		c.mu.Lock()
		c.buf = append(c.buf, b[:n]...)
		if err != nil {
			c.err = err
		}
		c.cond.Broadcast()
		for len(c.buf) >= readAhead && !c.closed {
			c.cond.Wait()
		}
		stop := c.err != nil || c.closed
		c.mu.Unlock()
		if stop {
			gone(errClientGone)
			return
		}
	}
}

func (c *readAheadConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.buf) == 0 && c.err == nil && !c.closed {
		c.cond.Wait()
	}
	if len(c.buf) > 0 {
		n := copy(b, c.buf)
		c.buf = c.buf[n:]
		c.cond.Broadcast()
		return n, nil
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	return 0, c.err
}

func (c *readAheadConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	return c.Conn.Close()
}
