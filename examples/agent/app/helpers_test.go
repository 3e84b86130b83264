package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/examples/agent/app"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/proxy"
)

// The agents the tests script, told apart as the proxy tells them apart.
var (
	router  = fakeai.Agent{Name: "router", Purpose: "structured"}
	titler  = fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	summary = fakeai.Agent{Name: "summary", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Summarize the conversation") }}
	agent   = fakeai.Agent{Name: "agent", Purpose: "agent"}
)

func routed() fakeai.Response {
	return fakeai.Output(map[string]any{"reasoning_level": "high", "profile": "standard", "confidence": 0.75, "reason": "planning"})
}

// The pages the agent's tools fetch in these tests.
const (
	statusPage = "https://status.example.com/status"
	slowPage   = "https://status.example.com/slow"
)

// site is the part of the internet the agent reaches in these tests,
// behind the proxy: a status page, a page that never answers, and
// GitHub's issue search, which wants a token.
type site struct {
	mu        sync.Mutex
	userAgent string              // of the last fetch of the status page
	slow      func(*http.Request) // called at each fetch of the slow page, which then waits for the agent to give up
}

// lastUserAgent is the user agent of the last fetch of the status page.
func (s *site) lastUserAgent() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userAgent
}

// onSlow sets what each fetch of the slow page calls.
func (s *site) onSlow(f func(*http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slow = f
}

func (s *site) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	switch {
	case r.URL.String() == statusPage:
		s.mu.Lock()
		s.userAgent = r.Header.Get("User-Agent")
		s.mu.Unlock()
		fmt.Fprint(rec, "All systems operational. Deploy 42 went out at 14:02 UTC.")
	case r.URL.String() == slowPage:
		s.mu.Lock()
		slow := s.slow
		s.mu.Unlock()
		if slow != nil {
			slow(r)
		}
		<-r.Context().Done()
		return nil, r.Context().Err()
	case r.URL.Host == "api.github.com" && r.URL.Path == "/search/issues" && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "):
		fmt.Fprint(rec, `{"total_count":1,"items":[{"number":7,"title":"Billing migration rollback plan"}]}`)
	default:
		http.NotFound(rec, r)
	}
	return rec.Result(), nil
}

// newAgent starts the agent for t, with env added to its configuration,
// on the scripted model, with site as the web.
func newAgent(t *testing.T, env map[string]string) (*fixture.Fixture, *site) {
	t.Helper()
	s := &site{}
	f := fixture.New(t, agenttest.App(env), fixture.ScriptedModel(),
		fixture.Recordings(t.TempDir(), proxy.ModeRecord), fixture.Upstream(s),
		fixture.Allow("https://status.example.com", "https://api.github.com"))
	return f, s
}

// As signs a request to the agent in as the web user email; Admin and
// Scheduler send the bearer of the admin routes and of the heartbeat.
func as(email string) http.Header { return http.Header{app.UserHeader: {email}} }

func admin() http.Header { return http.Header{"Authorization": {"Bearer " + agenttest.AdminSecret}} }

func scheduler() http.Header {
	return http.Header{"Authorization": {"Bearer " + agenttest.SchedulerSecret}}
}

// send calls one of the agent's routes directly, for what a fixture call
// does not do (a retry, bad input, a race), decoding a JSON answer into
// out; it returns the status.
func send(f *fixture.Fixture, method, path string, h http.Header, body, out any) (int, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, f.AppURL()+path, rd)
	if err != nil {
		return 0, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %s: %w", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode, nil
}

// call is send that fails the test on an error.
func call(t *testing.T, f *fixture.Fixture, method, path string, h http.Header, body, out any) int {
	t.Helper()
	code, err := send(f, method, path, h, body, out)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// waitIdle waits, within a minute, until the agent says it has nothing
// to do: after inputs a test sent itself, not through a fixture call. The
// idle route's waitMs answers as soon as it is.
func waitIdle(t *testing.T, f *fixture.Fixture) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		var st struct{ Idle bool }
		call(t, f, "GET", fmt.Sprintf("/api/internal/idle?waitMs=%d", min(time.Until(deadline), 20*time.Second).Milliseconds()), admin(), nil, &st)
		if st.Idle {
			return
		}
	}
	t.Fatal("the agent was not idle after a minute")
}

// lifecycle lists the turn states of the whole conversation, from the
// agent's reporting route, as state or state:outcome.
func lifecycle(t *testing.T, f *fixture.Fixture, id string) []string {
	t.Helper()
	var r struct {
		Events []struct{ Data map[string]any }
	}
	if code := call(t, f, "GET", "/api/conversations/"+id, admin(), nil, &r); code != 200 {
		t.Fatalf("report of %s: %d", id, code)
	}
	var out []string
	for _, e := range r.Events {
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

// db connects to the agent's database, to read what it stored.
func db(t *testing.T, f *fixture.Fixture) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), f.DatabaseURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// column reads one column of every row of query.
func column[T any](t *testing.T, conn *pgx.Conn, query string, args ...any) []T {
	t.Helper()
	rows, err := conn.Query(t.Context(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// one reads the one value of query.
func one[T any](t *testing.T, conn *pgx.Conn, query string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(t.Context(), query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v
}

// turns lists a call's turns as status or status:outcome.
func turns(c *fixture.Conversation) []string {
	out := []string{}
	for _, tr := range c.Turns {
		s := tr.Status
		if tr.Outcome != "" && tr.Outcome != "success" {
			s += ":" + tr.Outcome
		}
		out = append(out, s)
	}
	return out
}
