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

// watch follows an agent's tunnelled connection: it cancels the request
// being served when the connection closes, and holds the connection the
// proxy answers on, whose writes are corked. net/http stops watching a
// connection once it is hijacked, so without this a request held by a
// progress handler would not learn that the agent gave up.
type watch struct {
	conn *readAheadConn // the hijacked connection, once it is
	// cork is the intercepted connection, above its TLS, once the proxy
	// serves it; a raw tunnel has none, since it copies bytes with no
	// point at which to flush.
	cork *corkedConn

	// goproxy serves a tunnel's requests one after another, so the
	// connection's end has one request to cancel at most: the last one
	// bound.
	mu   sync.Mutex
	cur  context.CancelCauseFunc
	gone bool
}

// watchConnect prepares a CONNECT request for its hijack to be watched.
func watchConnect(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, *http.Request) {
	hj, ok := w.(http.Hijacker)
	if r.Method != http.MethodConnect || !ok {
		return w, r
	}
	wt := &watch{}
	return &watchedWriter{ResponseWriter: w, hj: hj, watch: wt}, r.WithContext(context.WithValue(r.Context(), connKey{}, wt))
}

// watchOf returns the watch goproxy carries from the CONNECT to the
// requests inside it, or nil.
func watchOf(ctx *goproxy.ProxyCtx) *watch {
	wt, _ := ctx.UserData.(*watch)
	return wt
}

// bind makes req's context end when the watched connection closes, or
// when cancel is called, at the request's end.
func (wt *watch) bind(req *http.Request) (*http.Request, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(context.WithValue(req.Context(), connKey{}, wt))
	wt.mu.Lock()
	if wt.gone {
		cancel(errClientGone)
	}
	// The request before this one has ended: its context needs no
	// cancelling, and dropping it here lets it go.
	wt.cur = cancel
	wt.mu.Unlock()
	return req.WithContext(ctx), cancel
}

// end cancels the request being served when the connection closes.
func (wt *watch) end() {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.gone = true
	if wt.cur != nil {
		wt.cur(errClientGone)
	}
}

// flushTo sends what the agent's connection holds back, before the
// request's goroutine waits: for a handler, or a paced chunk.
func flushTo(ctx context.Context) {
	wt, _ := ctx.Value(connKey{}).(*watch)
	wt.flush()
}

// flush sends what the watched connection holds back; it does nothing
// without a watch or before the proxy serves the tunnel.
func (wt *watch) flush() {
	if wt != nil && wt.cork != nil {
		wt.cork.flush()
	}
}

// corked makes a response's body send what the agent's connection holds
// back before each read that may wait, and at its end. A replay's reads
// wait only in sleep, which flushes first.
func (wt *watch) corked(resp *http.Response, err error) (*http.Response, error) {
	if wt == nil || wt.cork == nil || resp == nil || resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		// An upgraded connection's body is the upstream connection,
		// which carries frames both ways: serve writes it straight out.
		return resp, err
	}
	resp.Body = &corkedBody{ReadCloser: resp.Body, conn: wt.cork, replayed: OutcomeOf(resp) == OutcomeReplayed}
	return resp, err
}

type corkedBody struct {
	io.ReadCloser
	conn     *corkedConn
	replayed bool
}

func (b *corkedBody) Read(p []byte) (int, error) {
	if !b.replayed {
		b.conn.flush()
	}
	return b.ReadCloser.Read(p)
}

func (b *corkedBody) Close() error {
	// Flushed before the inner Close marks the exchange done, so that a
	// Shutdown that waits for it finds the response written. net/http
	// writes a chunked body's last CRLF after this: the next request's
	// start, or the next read, sends it.
	b.conn.flush()
	return b.ReadCloser.Close()
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
	w.watch.conn = c
	go c.fill(rw.Reader, w.watch.end)
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

// tlsRecordOverhead is the most a TLS record adds to its 16 KB of data:
// its header, MAC and padding.
const tlsRecordOverhead = 256 + 5

func (c *readAheadConn) fill(r io.Reader, gone func()) {
	// Each connection holds both buffers for as long as it is open, so
	// they are small: b holds a TLS record whole; own, what is read and
	// not yet taken, starts at a request's size and grows to b's at
	// most (a larger burst is read into an array let go once taken).
	b, own := make([]byte, 16<<10+tlsRecordOverhead), make([]byte, 0, 4<<10)
	for {
		n, err := r.Read(b)
		c.mu.Lock()
		if len(c.buf) == 0 {
			// Back to the start of its own array once all was read: the
			// slice that Read advances would otherwise run out of room,
			// and each fill allocate again.
			c.buf = own[:0]
		}
		grown := len(c.buf) == 0 && n > cap(own)
		c.buf = append(c.buf, b[:n]...)
		if grown && cap(c.buf) <= len(b) {
			own = c.buf[:0] // kept: the agent sends this much at once
		}
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
			gone()
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

// first returns the connection's first byte without reading it, once the
// agent sent it.
func (c *readAheadConn) first() (byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.buf) == 0 && c.err == nil && !c.closed {
		c.cond.Wait()
	}
	if len(c.buf) > 0 {
		return c.buf[0], nil
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

// corkedConn is the connection the proxy answers an intercepted request
// on, above its TLS. Its writes gather until the proxy would wait (to
// read the agent's next bytes, for a response body's next piece, for a
// progress handler) or the response ends, then go out as one write: one
// TLS record of up to 16 KB, and one system call. A chunked response
// would otherwise cost three records a chunk (size line, data, CRLF),
// each encrypted and written on its own. Chunk boundaries stay as they
// were.
type corkedConn struct {
	net.Conn
	mu  sync.Mutex
	buf []byte
	err error // the first failed write: every later one fails too
}

// corkLimit is how much a corked connection holds back at most.
const corkLimit = 64 << 10

func (c *corkedConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	c.buf = append(c.buf, b...)
	if len(c.buf) >= corkLimit {
		if err := c.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// Read sends what is held back first: the agent may be waiting for it
// before it sends more.
func (c *corkedConn) Read(b []byte) (int, error) {
	if err := c.flush(); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *corkedConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

func (c *corkedConn) flushLocked() error {
	if c.err != nil || len(c.buf) == 0 {
		return c.err
	}
	_, c.err = c.Conn.Write(c.buf)
	c.buf = c.buf[:0]
	if cap(c.buf) > corkLimit {
		c.buf = nil // a large write passed through: do not keep its buffer
	}
	return c.err
}

func (c *corkedConn) Close() error {
	c.flush()
	return c.Conn.Close()
}
