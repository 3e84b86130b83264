package proxy

import (
	"net"
	"net/http"
	"time"
)

// The defaults of ReadHeaderTimeout, HandshakeTimeout and IdleTimeout.
const (
	defaultReadHeaderTimeout = 30 * time.Second
	defaultHandshakeTimeout  = 30 * time.Second
	defaultIdleTimeout       = 2 * time.Minute
)

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Server returns an http.Server that serves the proxy with its deadlines
// on plain connections too: ReadHeaderTimeout and IdleTimeout, as Start
// read them. Serve it on a listener; Shutdown it, then the proxy, to
// stop.
func (p *Proxy) Server() *http.Server {
	p.init()
	return &http.Server{Handler: p, ReadHeaderTimeout: p.c.readHeaderTimeout, IdleTimeout: p.c.idleTimeout}
}

// setDeadline gives conn's reads and writes d from now; d <= 0 takes the
// deadline away.
func setDeadline(conn net.Conn, d time.Duration) {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	conn.SetDeadline(t)
}
