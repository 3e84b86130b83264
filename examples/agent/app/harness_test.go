package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/app"
	"github.com/agentvcr/agentvcr/examples/agent/slackio"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const (
	secret     = "test-scheduler-secret"
	adminKey   = "test-admin-secret"
	signing    = "test-signing-secret"
	teamID     = "TEVAL"
	userEmail  = "person1@example.com"
	gatewayURL = "https://ai-gateway.vercel.sh"
)

// world is the agent under test and everything around it, as in
// production: the model gateway (fakeai.NewServer posing as it) and Slack
// (the proxy's mock) reached through the recording proxy, and a real
// PostgreSQL.
type world struct {
	t     *testing.T
	model *fakeai.Server
	proxy *proxy.Proxy
	slack *slack.Mock
	app   *app.App
	url   string // the agent's routes
	db    string
	web   *httptest.Server // a public page and a GitHub API, on loopback
	seq   atomic.Int64
	ua    atomic.Value // the user agent of the last page fetch
	// slow is told of each fetch of /slow, which answers when the test
	// ends or the agent gives up on it.
	slow chan struct{}
}

// upstream sends the gateway's traffic to the stand-in and the rest (the
// loopback web server) as is.
type upstream struct{ model, other http.RoundTripper }

func (u upstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == "ai-gateway.vercel.sh" {
		return u.model.RoundTrip(r)
	}
	return u.other.RoundTrip(r)
}

func newWorld(t *testing.T, env map[string]string) *world {
	t.Helper()
	w := &world{t: t, model: fakeai.NewServer(t), db: pgtest.NewDatabase(t), slow: make(chan struct{}, 4)}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	w.web = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/status":
			w.ua.Store(r.Header.Get("User-Agent"))
			fmt.Fprint(rw, "All systems operational. Deploy 42 went out at 14:02 UTC.")
		case r.URL.Path == "/slow":
			w.slow <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case r.URL.Path == "/search/issues" && r.Header.Get("Authorization") == "Bearer gh-code-1":
			fmt.Fprint(rw, `{"total_count":1,"items":[{"number":7,"title":"Billing migration rollback plan"}]}`)
		case r.URL.Path == "/search/issues":
			http.Error(rw, "bad credentials", http.StatusUnauthorized)
		default:
			http.NotFound(rw, r)
		}
	}))
	t.Cleanup(w.web.Close)
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.slack = slack.New()
	w.slack.TeamID = teamID
	w.slack.AddUser(slack.User{ID: "U0PERSON1", Name: "person1", RealName: "Person One", Email: userEmail})
	w.slack.AddChannel(slack.Channel{ID: "CEVAL1", Name: "launch"})
	w.proxy = &proxy.Proxy{CA: authority, Dir: t.TempDir(), Slack: w.slack,
		Allow:    []string{gatewayURL, "https://slack.com", w.web.URL},
		Upstream: upstream{model: w.model.Transport(), other: http.DefaultTransport},
		Rules: []proxy.Rule{
			{Name: "model", URLPrefix: gatewayURL + "/", Mode: proxy.ModePassthrough},
			{Name: "slack", URLPrefix: "https://slack.com/api/", Mode: proxy.ModeMock},
			{Name: "web", URLPrefix: w.web.URL + "/", Mode: proxy.ModePassthrough},
		}}
	if err := w.proxy.Start(); err != nil {
		t.Fatal(err)
	}
	psrv := httptest.NewServer(w.proxy)
	t.Cleanup(psrv.Close)
	vars := map[string]string{
		"DATABASE_URL": w.db, "SLACK_SIGNING_SECRET": signing, "SLACK_BOT_TOKEN": "xoxb-test-token",
		"AI_GATEWAY_API_KEY": "test-gateway-key", "AGENT_SCHEDULER_SECRET": secret, "AGENT_ADMIN_SECRET": adminKey,
		"HTTPS_PROXY": psrv.URL, "SSL_CERT_FILE": authority.CertPath, "GITHUB_API_URL": w.web.URL,
		"AGENT_MODEL": "anthropic/claude-sonnet-4.5", "AGENT_FAST_MODEL": "anthropic/claude-haiku-4.5",
	}
	for k, v := range env {
		if v == "" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
	cfg, err := app.FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w.app, err = app.New(context.Background(), cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.app.Handler())
	w.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		w.app.Close()
	})
	return w
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// The agents the tests script: each is told apart as the proxy tells
// them apart.
var (
	router  = fakeai.Agent{Name: "router", Purpose: "structured"}
	titler  = fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	summary = fakeai.Agent{Name: "summary", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Summarize the conversation") }}
	agent   = fakeai.Agent{Name: "agent", Purpose: "agent", Tools: []string{"webFetch"}}
)

func routed() fakeai.Response {
	return fakeai.Output(map[string]any{"reasoning_level": "high", "profile": "standard", "confidence": 0.75, "reason": "planning"})
}

// do sends a request to the agent as user (none for "") and decodes the
// JSON answer into out.
func (w *world) do(method, path, user string, body any, out any) int {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, w.url+path, rd)
	if user != "" {
		req.Header.Set(app.UserHeader, user)
		req.Header.Set(app.NameHeader, "Person 1")
	}
	switch {
	case strings.HasPrefix(path, "/api/internal/heartbeat"):
		req.Header.Set("Authorization", "Bearer "+secret)
	case strings.HasPrefix(path, "/api/internal/"):
		req.Header.Set("Authorization", "Bearer "+adminKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			w.t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// slackEvent posts a signed Slack event and returns the status.
func (w *world) slackEvent(event map[string]any) int {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"token": "x", "team_id": teamID, "api_app_id": "AEVAL", "type": "event_callback",
		"event_id": fmt.Sprintf("Ev%d", w.seq.Add(1)), "event_time": time.Now().Unix(), "event": event})
	return w.postSigned(body, time.Now().Unix(), signing)
}

func (w *world) postSigned(body []byte, ts int64, key string) int {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.url+"/api/webhooks/slack", bytes.NewReader(body))
	req.Header.Set("X-Slack-Request-Timestamp", fmt.Sprint(ts))
	req.Header.Set("X-Slack-Signature", slackio.Sign(key, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// idle waits until the agent says it has nothing to do, within a
// deadline.
func (w *world) idle() {
	w.t.Helper()
	w.until("the agent to be idle", func() bool {
		var st struct{ Idle bool }
		w.do("GET", "/api/internal/idle", "", nil, &st)
		return st.Idle
	})
}

// until polls cond, which reads the agent's state, until it holds or
// 30 s pass.
func (w *world) until(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			w.t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type reportEvent struct {
	Seq  int
	Data map[string]any
}

func (w *world) report(id string) []reportEvent {
	w.t.Helper()
	var r struct{ Events []reportEvent }
	if code := w.do("GET", "/api/conversations/"+id, userEmail, nil, &r); code != 200 {
		w.t.Fatalf("report of %s: %d", id, code)
	}
	return r.Events
}

// lifecycle lists the turn states the report shows, in order.
func lifecycle(events []reportEvent) []string {
	var out []string
	for _, e := range events {
		if e.Data["type"] == "turn_lifecycle" {
			s := e.Data["state"].(string)
			if o, _ := e.Data["outcome"].(string); o != "" && o != "success" {
				s += ":" + o
			}
			out = append(out, s)
		}
	}
	return out
}

func replies(events []reportEvent) []string {
	var out []string
	for _, e := range events {
		if e.Data["type"] == "message" && e.Data["role"] == "assistant" {
			out = append(out, e.Data["text"].(string))
		}
	}
	return out
}

// recorder builds cmd/recorder for the test.
func recorder(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "recorder")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/cmd/recorder").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/recorder: %v\n%s", err, out)
	}
	return bin
}
