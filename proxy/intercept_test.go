package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// settle waits for p's exchanges and for what it recorded to be written,
// before the test's directory goes.
func settle(t *testing.T, p *Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
}

// echo is an upstream that answers with the request's body.
func echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	})
}

// A tunnel the agent opens without TLS, as a client of ws:// or http://
// through an HTTPS proxy setting does, is served as plain HTTP.
func TestATunnelWithoutTLSIsServedAsHTTP(t *testing.T) {
	upstream := httptest.NewServer(echo())
	defer upstream.Close()
	p, _ := front(t, upstream, ModeRecord, t.TempDir(), Rule{Name: "api", URLPrefix: upstream.URL + "/"})
	srv := httptest.NewServer(p)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	host := strings.TrimPrefix(upstream.URL, "http://")
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	fmt.Fprintf(conn, "POST /v1/echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\nhello", host)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello" || OutcomeOf(resp) != OutcomeRecorded {
		t.Fatalf("got %q, outcome %q; want the upstream's echo, recorded", b, OutcomeOf(resp))
	}
	settle(t, p)
}

// An agent that sends "Expect: 100-continue" gets the 100 before it
// sends the body, and the answer after: curl does this for a large
// upload, and would otherwise wait a second before sending anyway.
func TestExpectContinueGetsAContinue(t *testing.T) {
	upstream := httptest.NewTLSServer(echo())
	defer upstream.Close()
	p, _ := front(t, upstream, ModeRecord, t.TempDir(), Rule{Name: "api", URLPrefix: upstream.URL + "/"})
	srv := httptest.NewServer(p)
	defer srv.Close()
	host := strings.TrimPrefix(upstream.URL, "https://")
	tc := tunnel(t, srv.Listener.Addr().String(), host, p)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(tc, "POST /v1/upload HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n", host)
	br := bufio.NewReader(tc)
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("before the body the agent got %q, %v; want a 100 Continue", line, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after the 100: %q, %v", blank, err)
	}
	io.WriteString(tc, "hello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(b) != "hello" {
		t.Fatalf("got %d %q; want the upstream's echo", resp.StatusCode, b)
	}
	settle(t, p)
}

// A CONNECT over HTTP/2, as an agent may send when an embedder serves the
// proxy over TLS, is intercepted too: its stream cannot be hijacked, and
// must not bring the proxy down.
func TestAConnectOverHTTP2IsServed(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer upstream.Close()
	p, _ := front(t, upstream, ModePassthrough, t.TempDir())
	srv := httptest.NewUnstartedServer(p)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	host := strings.TrimPrefix(upstream.URL, "https://")
	body, agent := io.Pipe()
	defer agent.Close()
	connect, _ := http.NewRequest(http.MethodConnect, srv.URL, body)
	connect.Host = host
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = true
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(connect)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT: %s %d; want 200 over HTTP/2", resp.Proto, resp.StatusCode)
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.CA.Cert)
	tc := tls.Client(&streamConn{Reader: resp.Body, Writer: agent}, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	fmt.Fprintf(tc, "GET /h2 HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	got, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(got.Body)
	if got.StatusCode != http.StatusOK || string(b) != "ok /h2" {
		t.Fatalf("inside the tunnel: %d %q; want the upstream's answer", got.StatusCode, b)
	}
}

// streamConn is an HTTP/2 CONNECT stream as a net.Conn: what it reads
// is the response body, what it writes the request body.
type streamConn struct {
	io.Reader
	io.Writer
	net.Conn // nil: only Read and Write are called
}

func (c *streamConn) Read(b []byte) (int, error)  { return c.Reader.Read(b) }
func (c *streamConn) Write(b []byte) (int, error) { return c.Writer.Write(b) }
