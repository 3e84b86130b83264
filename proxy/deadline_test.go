package proxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// Connections that go quiet at any step (before the first byte, after a
// CONNECT, in the middle of a TLS handshake, idle after a request, plain
// or in an intercepted tunnel) are closed at their deadline, and what
// they held goes with them: the goroutine count returns to where it was,
// and the proxy serves on.
func TestIdleConnectionsAreClosedAtTheirDeadline(t *testing.T) {
	const perKind = 100 // five kinds: 500 connections
	const deadline = time.Second
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < 2*perKind*5+100 {
		t.Fatalf("the open-file limit is %d: the test holds %d connections, two descriptors each; raise it (ulimit -n 2048)", lim.Cur, perKind*5)
	}

	// Upstreams that close idle connections too, so that the proxy's own
	// connections to them go at the end, and with them their goroutines.
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	plainUp, tlsUp := httptest.NewUnstartedServer(ok), httptest.NewUnstartedServer(ok)
	plainUp.Config.IdleTimeout, tlsUp.Config.IdleTimeout = deadline, deadline
	plainUp.Start()
	tlsUp.StartTLS()
	defer plainUp.Close()
	defer tlsUp.Close()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := tlsUp.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = nil
	p := &Proxy{CA: authority, Allow: []string{plainUp.URL, tlsUp.URL}, Mode: ModePassthrough, Dir: t.TempDir(), Upstream: tr,
		ReadHeaderTimeout: deadline, HandshakeTimeout: deadline, IdleTimeout: deadline}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = p.Server()
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	plainHost, tlsHost := strings.TrimPrefix(plainUp.URL, "http://"), strings.TrimPrefix(tlsUp.URL, "https://")
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)

	dial := func() net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // the test's own, far beyond the proxy's
		return conn
	}
	connect := func(host string) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn := dial()
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		br := bufio.NewReader(conn)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		return conn, br
	}
	get := func(rw io.ReadWriter, br *bufio.Reader, target, host string) {
		t.Helper()
		fmt.Fprintf(rw, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, host)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || string(b) != "ok" || resp.Close {
			t.Fatalf("GET %s: %d %q close %v; want ok, kept alive", target, resp.StatusCode, b, resp.Close)
		}
	}

	baseline := runtime.NumGoroutine()
	// Each held connection is read until the proxy closes it.
	var held []io.Reader
	// The slow kinds first, so that those opened last, fast, are all
	// still open when the count is taken.
	for range perKind { // idle keep-alive in an intercepted tunnel, after one request
		conn, br := connect(tlsHost)
		tc := tls.Client(&prefixConn{Conn: conn, r: br}, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		get(tc, bufio.NewReader(tc), "/", tlsHost)
		held = append(held, tc)
	}
	for range perKind { // idle keep-alive, plain, after one request
		conn := dial()
		br := bufio.NewReader(conn)
		get(conn, br, plainUp.URL+"/", plainHost)
		held = append(held, br)
	}
	for range perKind { // in the middle of a TLS handshake: a record header, and part of its body
		conn, br := connect(tlsHost)
		conn.Write([]byte{tlsHandshake, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00})
		held = append(held, br)
	}
	for range perKind { // a CONNECT answered, then nothing
		_, br := connect(tlsHost)
		held = append(held, br)
	}
	for range perKind { // nothing at all
		held = append(held, dial())
	}
	opened := runtime.NumGoroutine()
	if opened < baseline+2*perKind {
		t.Fatalf("%d goroutines with %d connections open, %d before: the proxy should hold at least one for each", opened, len(held), baseline)
	}

	start := time.Now()
	for i, c := range held {
		if _, err := io.Copy(io.Discard, c); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("connection %d of %d (kind %d): %v; want the proxy to close it", i, len(held), i/perKind, err)
		}
	}
	closed := time.Since(start)
	for end := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > baseline; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines 5 s after every connection closed; %d before they opened:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
	}
	t.Logf("%d connections: %d goroutines open, %d before and after; all closed %s after the last opened (deadline %s)",
		len(held), opened, baseline, closed.Round(time.Millisecond), deadline)

	// The proxy serves on, both ways.
	proxyURL, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer client.CloseIdleConnections()
	for _, u := range []string{plainUp.URL, tlsUp.URL} {
		resp, err := client.Get(u + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" || OutcomeOf(resp) != OutcomePassthrough {
			t.Fatalf("GET %s after: %q %s", u, b, OutcomeOf(resp))
		}
	}
}
