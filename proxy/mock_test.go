package proxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// TestProxyImportsNeitherMock holds the proxy to serving its mocks as the
// handlers its caller gives it: neither the scripted model nor the Slack
// mock is among its dependencies, and the scripted model does not import
// the proxy either.
func TestProxyImportsNeitherMock(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is not on PATH: install Go to list the proxy's dependencies")
	}
	const module = "github.com/agentvcr/agentvcr/"
	for _, tt := range []struct {
		pkg       string
		forbidden []string
	}{
		{"./", []string{module + "fakeai", module + "proxy/slack", module + "control"}},
		{"../fakeai", []string{module + "proxy", module + "control"}},
	} {
		out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", tt.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tt.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		if !deps[module+"proxy/wire"] {
			t.Fatalf("go list -deps %s does not list proxy/wire, which both use: %s", tt.pkg, out)
		}
		for _, f := range tt.forbidden {
			if deps[f] {
				t.Errorf("%s depends on %s", tt.pkg, f)
			}
		}
	}
}

// mockFunc is a caller's own Mock: any handler, with the calls it did
// not know.
type mockFunc struct {
	http.HandlerFunc
	unknown []string
}

func (m *mockFunc) Unknown() []string { return m.unknown }

// TestModeMockServesTheCallersHandler: a rule in mode mock is answered by
// whatever Mock the caller gives, in process, and a scope in which it met
// a call it did not know fails.
func TestModeMockServesTheCallersHandler(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("mode mock reached the upstream: %s", r.URL)
	}))
	defer up.Close()
	m := &mockFunc{}
	m.HandlerFunc = func(w http.ResponseWriter, r *http.Request) {
		m.unknown = append(m.unknown, r.URL.Path)
		io.WriteString(w, "mocked "+r.URL.Path)
	}
	_, hc := frontWith(t, up, func(p *Proxy) {
		p.Slack = m
		p.Rules = []Rule{{Name: "mine", URLPrefix: up.URL + "/", Mode: ModeMock}}
	})
	resp, err := hc.Get(up.URL + "/api/anything")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if OutcomeOf(resp) != OutcomeMocked || string(b) != "mocked /api/anything" || len(m.unknown) != 1 {
		t.Fatalf("%s %q, the mock saw %v; want mocked by the caller's handler", OutcomeOf(resp), b, m.unknown)
	}
}

// TestStartNeedsTheMockOfEachMode: a rule in mode mock or fake without
// the mock it is answered by is refused at Start, saying which rule and
// what to give, rather than failing each request later.
func TestStartNeedsTheMockOfEachMode(t *testing.T) {
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name            string
		proxy, ruleMode Mode
		want            string
	}{
		{"rule in mode mock", "", ModeMock, "rule slack is in mode mock and Proxy.Slack is nil"},
		{"rule in mode fake", "", ModeFake, "rule slack is in mode fake and Proxy.Fake is nil"},
		{"proxy in mode fake", ModeFake, "", "rule slack is in mode fake and Proxy.Fake is nil"},
		{"no rule needs one", ModeAuto, ModeReplay, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Proxy{CA: authority, Dir: t.TempDir(), Mode: tt.proxy, Rules: []Rule{{Name: "slack", URLPrefix: "https://slack.com/api/", Mode: tt.ruleMode}}}
			err := p.Start()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("Start: %v; want %q", err, tt.want)
			}
		})
	}
}
