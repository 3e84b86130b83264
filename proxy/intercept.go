package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/elazarl/goproxy"
)

// tlsHandshake is the first byte of a TLS connection: a handshake record.
const tlsHandshake = 0x16

// intercept serves a tunnel the proxy terminates: it answers the
// CONNECT, does the TLS handshake as host with the proxy's CA when the
// agent starts one, then reads the agent's requests one after another
// and answers each on a corked connection above the TLS.
//
// goproxy's own loop does the same, less the cork: it writes to the TLS
// connection itself, three records a chunk of a stream.
//
// Each wait on the agent has a deadline (see Proxy.ReadHeaderTimeout,
// HandshakeTimeout, IdleTimeout): a deadline on client ends the
// read-ahead's read of it, which ends every read after. None is set while
// a request is served: a held request, a long stream or an upgraded
// connection reads nothing from the agent for as long as it takes.
func (p *Proxy) intercept(connect *http.Request, client net.Conn, wt *watch, host string) {
	defer client.Close()
	setDeadline(client, p.c.readHeaderTimeout)
	if _, err := fmt.Fprintf(client, "HTTP/%d.%d 200 OK\r\n\r\n", connect.ProtoMajor, connect.ProtoMinor); err != nil {
		return
	}
	// client is wt.conn: the proxy serves HTTP/1 only, so each CONNECT
	// is hijacked, and watched.
	b, err := wt.conn.first()
	if err != nil {
		return
	}
	scheme, conn := "http", client
	if b == tlsHandshake {
		config := p.c.ca.TLSConfig(stripPort(host)) // a new one each call
		// HTTP/1 only; an HTTP/1.0 client (curl --http1.0) offers
		// http/1.0 alone, and a TLS server that knows none of the
		// client's protocols refuses the handshake.
		config.NextProtos = []string{"http/1.1", "http/1.0"}
		tc := tls.Server(client, config)
		setDeadline(client, p.c.handshakeTimeout)
		if err := tc.HandshakeContext(context.Background()); err != nil {
			return
		}
		setDeadline(client, p.c.readHeaderTimeout)
		scheme, conn = "https", tc
	}
	cork := &corkedConn{Conn: conn}
	defer cork.Close() // a TLS close_notify, then the connection
	wt.cork = cork
	br := bufio.NewReader(cork)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		setDeadline(client, 0)
		if !p.serveOne(req, connect, scheme, cork, br, wt) {
			return
		}
		// Idle until the next request's first byte, which a read
		// flushes the response before waiting for; then its header.
		setDeadline(client, p.c.idleTimeout)
		if _, err := br.Peek(1); err != nil {
			return
		}
		setDeadline(client, p.c.readHeaderTimeout)
	}
}

// serveOne answers one request of an intercepted tunnel, and reports
// whether the connection goes on.
func (p *Proxy) serveOne(req, connect *http.Request, scheme string, conn *corkedConn, br *bufio.Reader, wt *watch) bool {
	req, cancel := wt.bind(req)
	defer cancel(nil)
	req.RemoteAddr = connect.RemoteAddr
	if !req.URL.IsAbs() { // origin form: /path
		req.URL.Host = req.Host
		if req.URL.Host == "" {
			req.URL.Host = connect.Host
		}
	}
	req.URL.Scheme = scheme
	var cont *continueOnRead
	if req.ProtoAtLeast(1, 1) && req.Body != http.NoBody && hasToken(req.Header, "Expect", "100-continue") {
		cont = &continueOnRead{ReadCloser: req.Body, client: conn}
		req.Body = cont
	}
	defer req.Body.Close()

	ctx := &goproxy.ProxyCtx{Req: req, Proxy: p.server, UserData: wt}
	req, resp := p.onRequest(req, ctx)
	if resp == nil {
		goproxy.RemoveProxyHeaders(ctx, req)
		var err error
		if resp, err = ctx.RoundTrip(req); err != nil {
			return false
		}
	}
	defer resp.Body.Close()
	if resp.Body != http.NoBody && bodyAllowed(req, resp) && resp.ContentLength <= 0 && resp.Header.Get("Content-Length") == "" {
		// A length not known up front: chunked, as the upstream sent it,
		// to a client of HTTP/1.1. An HTTP/1.0 client knows no chunks:
		// its body ends when the connection closes.
		resp.ContentLength = -1
		resp.TransferEncoding = []string{"chunked"}
		if !req.ProtoAtLeast(1, 1) {
			resp.TransferEncoding = nil
			resp.Close = true
		}
	}
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	if cont != nil {
		cont.stop()
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return upgrade(resp, conn, br)
	}
	if req.Close || hasToken(resp.Header, "Connection", "close") || cont != nil && !cont.sentContinue() {
		resp.Close = true
	}
	if !req.ProtoAtLeast(1, 1) && !resp.Close {
		// An HTTP/1.0 client that asked to keep the connection: say it
		// is kept, or the client closes it. A copy: a recording may
		// still read the header.
		resp.Header = resp.Header.Clone()
		resp.Header.Set("Connection", "keep-alive")
	}
	err := resp.Write(conn)
	if conn.flush() != nil {
		return false // the end of a chunked body comes after its Close
	}
	return err == nil && !resp.Close
}

// upgrade writes a 101, then carries the connection's bytes both ways,
// uncorked, until one side ends.
func upgrade(resp *http.Response, conn *corkedConn, br *bufio.Reader) bool {
	upstream, ok := resp.Body.(io.ReadWriter)
	if !ok {
		return false
	}
	resp.Body = nil
	if resp.Write(conn) != nil || conn.flush() != nil {
		return false
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(upstream, br); done <- struct{}{} }()
	go func() { io.Copy(conn.Conn, upstream); done <- struct{}{} }()
	<-done
	return false
}

// bodyAllowed reports whether a response to req may have a body.
func bodyAllowed(req *http.Request, resp *http.Response) bool {
	switch {
	case req.Method == http.MethodHead:
		return false
	case resp.StatusCode >= 100 && resp.StatusCode < 200, resp.StatusCode == http.StatusNoContent, resp.StatusCode == http.StatusNotModified:
		return false
	}
	return true
}

// hasToken reports whether header name holds token, case-insensitively,
// in any of its comma-separated values.
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// continueOnRead sends "100 Continue" when the request's body is first
// read, as net/http's server does, until the response is on its way.
type continueOnRead struct {
	io.ReadCloser
	client  io.Writer
	mu      sync.Mutex
	stopped bool
	sent    bool
}

func (r *continueOnRead) Read(b []byte) (int, error) {
	r.mu.Lock()
	if !r.stopped && !r.sent {
		r.sent = true
		if _, err := io.WriteString(r.client, "HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			r.mu.Unlock()
			return 0, err
		}
	}
	r.mu.Unlock()
	return r.ReadCloser.Read(b)
}

func (r *continueOnRead) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

func (r *continueOnRead) sentContinue() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

// Close does not drain a body the agent was never asked to send: the
// response says "Connection: close" instead.
func (r *continueOnRead) Close() error {
	if !r.sentContinue() {
		return nil
	}
	return r.ReadCloser.Close()
}
