package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// privateUpstream is a loopback TLS server whose certificate a CA of its
// own signed, which no system trusts, and that CA.
func privateUpstream(t *testing.T) (*httptest.Server, *ca.Authority) {
	t.Helper()
	private, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	leaf, err := private.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	// Set as the certificate, not by GetCertificate: StartTLS would add
	// its own, which a client that sends no server name gets.
	up.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}}
	up.StartTLS()
	t.Cleanup(up.Close)
	return up, private
}

// An upstream whose CA is private is refused until the proxy trusts that
// CA (UpstreamRoots), then served.
func TestUpstreamRootsTrustAPrivateCA(t *testing.T) {
	up, private := privateUpstream(t)
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	get := func(roots *x509.CertPool) (int, string) {
		t.Helper()
		p := &Proxy{CA: authority, Allow: []string{up.URL}, Mode: ModePassthrough, Dir: t.TempDir(), UpstreamRoots: roots}
		resp, err := serve(t, p).Get(up.URL + "/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(nil); code != http.StatusBadGateway || !strings.Contains(body, "certificate") || !strings.Contains(body, "--upstream-ca") {
		t.Fatalf("a private CA's upstream with the system roots: %d %q; want 502 that says how to trust it", code, body)
	}
	roots := x509.NewCertPool()
	roots.AddCert(private.Cert)
	if code, body := get(roots); code != http.StatusOK || body != `{"path":"/v1/models"}` {
		t.Fatalf("with its CA in UpstreamRoots: %d %q", code, body)
	}
}

// What made a request fail is logged as a warning, so that a proxy that
// logs warnings only (recorder proxy --quiet) still says it: a refused
// origin, an upstream that failed its TLS, a replay miss. A miss names
// the nearest recording only when there is one.
func TestWhyARequestFailedIsAWarning(t *testing.T) {
	up, _ := privateUpstream(t)
	logs := &records{}
	quiet := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rules := []Rule{{Name: "live", URLPrefix: up.URL + "/live/", Mode: ModePassthrough}, {Name: "replayed", URLPrefix: up.URL + "/", Mode: ModeReplay}}
	p, client := frontWith(t, up, func(p *Proxy) {
		p.Rules, p.Dir, p.Log, p.Upstream = rules, t.TempDir(), quiet, nil // the system roots: up's CA is not among them
	})
	get := func(u string, want int) {
		t.Helper()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d; want %d", u, resp.StatusCode, want)
		}
	}
	get("https://127.0.0.1:9/elsewhere", http.StatusForbidden)
	get(up.URL+"/live/x", http.StatusBadGateway)
	get(up.URL+"/never-recorded", http.StatusPreconditionFailed)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	logs.mu.Lock()
	got := logs.list
	logs.mu.Unlock()
	lines, _ := json.Marshal(got)
	if len(got) != 4 {
		t.Fatalf("%d warnings; want the empty replay, the refusal, the TLS failure and the miss: %s", len(got), lines)
	}
	for i, want := range []string{"replay with no recordings", "refused: the origin is not on the allow list", "certificate", "missed: no recording matches, and the rule's cassette has none"} {
		if msg, _ := got[i]["msg"].(string); got[i]["level"] != "WARN" || !strings.Contains(msg, want) {
			t.Errorf("warning %d: %v; want one that says %q", i, got[i], want)
		}
	}
	if _, ok := got[3]["nearest"]; ok {
		t.Errorf("a miss with nothing recorded names a nearest recording: %v", got[3])
	}
}
