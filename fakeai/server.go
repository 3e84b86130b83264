package fakeai

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// Server is a Model served over TLS on loopback that answers for any host
// name (ai-gateway.vercel.sh, api.anthropic.com, api.openai.com) with a
// certificate for that name: a stand-in for the providers, so that a test
// can send "live" model traffic through the proxy, record it and replay
// it, without the internet.
type Server struct {
	*Model
	// URL is the server's own address, https://127.0.0.1:port.
	URL string
	// CertPEM is the certificate of the authority that signs the
	// server's certificates, for a process that must trust it
	// (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS).
	CertPEM []byte

	srv   *httptest.Server
	roots *x509.CertPool
}

// NewServer starts a Server for t, with a model that reports to t (see
// New), and stops it when t ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatalf("fakeai: a certificate authority for the server: %v", err)
	}
	m := New(t)
	srv := httptest.NewUnstartedServer(m)
	srv.TLS = authority.TLSConfig("localhost")
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	return &Server{Model: m, URL: srv.URL, CertPEM: authority.PEM(), srv: srv, roots: roots}
}

// Transport returns a transport that sends every request, whatever its
// host, to the server, and trusts the server's certificates only: what a
// proxy under test takes as its Upstream.
func (s *Server) Transport() *http.Transport {
	addr := strings.TrimPrefix(s.URL, "https://")
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
}

// Close stops the server: an upstream that has gone away.
func (s *Server) Close() { s.srv.Close() }
