package fixtureservice_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fixtureservice"
	"github.com/agentvcr/agentvcr/internal/pgtest"
)

// agentBinary is the reference agent, built once for the package's
// tests: the app the service runs as a process, as a client in another
// language would have it run.
var agentBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fixtureservice-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBinary = filepath.Join(dir, "agent")
	build := exec.Command("go", "build", "-o", agentBinary, "../examples/agent")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the reference agent:", err)
		os.Exit(1)
	}
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

const token = "test-service-token"

// service is a client of a service on loopback, for one test.
type service struct {
	t   testing.TB
	url string
	tok string
}

// newService starts a service on the test cluster, closed when t ends.
func newService(t testing.TB) *service {
	t.Helper()
	db, err := pgtest.Server()
	if err != nil {
		t.Fatal(err)
	}
	svc := fixtureservice.New(token, fixtureservice.Options{DatabaseServer: db})
	srv := httptest.NewServer(newDocumented(t, svc))
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Error(err)
		}
		srv.Close()
	})
	return &service{t: t, url: srv.URL, tok: token}
}

// do sends a call and returns its status and body.
func (s *service) do(method, path string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// must sends a call that must answer want, and decodes the answer.
func (s *service) must(want int, method, path string, body, out any) {
	s.t.Helper()
	status, raw := s.do(method, path, body)
	if status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, status, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

// referenceAgent is the reference agent as a client describes it: its
// binary, its secrets, its routes and the options it takes.
func referenceAgent() map[string]any {
	return map[string]any{
		"name": "examples/agent", "command": []string{agentBinary}, "addrEnv": "AGENT_ADDR",
		"env": map[string]string{"SLACK_SIGNING_SECRET": "test-signing-secret", "SLACK_BOT_TOKEN": "xoxb-test",
			"AI_GATEWAY_API_KEY": "test-gateway-key", "AGENT_SCHEDULER_SECRET": "test-scheduler-secret",
			"AGENT_ADMIN_SECRET": "test-admin-secret", "GITHUB_WEBHOOK_SECRET": "test-github-webhook-secret",
			"AGENT_EVENT_SECRET": "test-event-secret"},
		"routes": map[string]string{"preset": "junior", "idle": "/api/internal/idle", "queue": "/api/internal/queue",
			"queueHold": "/api/internal/queue/hold", "queueRelease": "/api/internal/queue/release",
			"queueHoldPaused": "/api/internal/queue/hold?only=paused", "conversations": "/api/internal/conversations",
			"automations": "/api/internal/automations", "memories": "/api/internal/memories", "credentials": "/api/internal/credentials",
			"githubWebhook": "/api/webhooks/github", "events": "/api/events", "eventAutomations": "/api/internal/event-automations",
			"watches": "/api/internal/watches"},
		"options": map[string]any{"turnTimeout": map[string]string{"env": "AGENT_TURN_TIMEOUT", "duration": "go"},
			"toolCalls": "AGENT_TOOL_CALL_LIMIT", "turnSlice": map[string]string{"env": "AGENT_TURN_SLICE", "duration": "go"},
			"contextWindowTokens": "AGENT_CONTEXT_WINDOW_TOKENS", "automatedTurns": "AGENT_AUTOMATED_TURN_LIMIT"},
		"slackSigningSecret": "test-signing-secret", "schedulerSecret": "test-scheduler-secret", "adminSecret": "test-admin-secret",
		"githubWebhookSecret": "test-github-webhook-secret", "eventSecret": "test-event-secret",
		"botName": "junior-example", "model": "anthropic/claude-sonnet-4.5",
	}
}

// started is a fixture's start answer.
type started struct {
	ID     string `json:"id"`
	AppURL string `json:"appUrl"`
	Start  *struct {
		ID  string            `json:"id"`
		Env map[string]string `json:"env"`
	} `json:"start"`
	Failures []string `json:"failures"`
}

// create makes a fixture of the reference agent with the scripted
// model, deleted (with no failure left) when t ends.
func (s *service) create(spec map[string]any) string {
	s.t.Helper()
	var st started
	s.must(http.StatusCreated, "POST", "/v1/fixtures", spec, &st)
	if st.AppURL == "" {
		s.t.Fatalf("the fixture did not start: %+v", st)
	}
	s.t.Cleanup(func() { s.deleteClean(st.ID) })
	return st.ID
}

func (s *service) deleteClean(id string) {
	s.t.Helper()
	status, raw := s.do("DELETE", "/v1/fixtures/"+id, nil)
	if status == http.StatusNotFound {
		return // the test deleted it
	}
	var got struct{ Failures []string }
	if status != http.StatusOK || json.Unmarshal(raw, &got) != nil || len(got.Failures) > 0 {
		s.t.Errorf("DELETE fixture %s: %d %s", id, status, raw)
	}
}

// script queues the scripted model's answers for an agent, through the
// fixture's control API.
func (s *service) script(id string, agent map[string]any, responses ...map[string]any) {
	s.t.Helper()
	s.must(http.StatusNoContent, "POST", "/v1/fixtures/"+id+"/control/v1/fakeai/respond", map[string]any{"agent": agent, "responses": responses}, nil)
}

var (
	router = map[string]any{"name": "router", "purpose": "structured", "systemPrefix": "You choose the execution profile"}
	titler = map[string]any{"name": "title", "purpose": "text"}
	loop   = map[string]any{"name": "agent", "purpose": "agent"}
)

func routed() map[string]any {
	return map[string]any{"output": map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}}
}

func text(s string) map[string]any { return map[string]any{"text": s} }

// conversation is a call's result.
type conversation struct {
	ID      string `json:"id"`
	Replies []struct {
		MessageID string `json:"messageId"`
		Text      string `json:"text"`
	} `json:"replies"`
	Turns []struct {
		ID, Status, Outcome string
	} `json:"turns"`
	Scores []struct {
		Judge   string
		Verdict struct{ Answer string }
	} `json:"scores"`
	Earlier       string            `json:"earlier"`
	ModelRequests []json.RawMessage `json:"modelRequests"`
}

// line is a line of a call's stream.
type line struct {
	Call     string          `json:"call"`
	Progress json.RawMessage `json:"progress"`
	Result   *conversation   `json:"result"`
	Failures []string        `json:"failures"`
	Error    string          `json:"error"`
	Timeout  bool            `json:"timeout"`
}

// call runs a call, handing each progress line to onProgress (which
// must acknowledge it), and returns its last line and every line.
func (s *service) call(id, op string, body map[string]any, onProgress func(call string, p map[string]any)) (line, []json.RawMessage) {
	s.t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.url+"/v1/fixtures/"+id+"/"+op, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+s.tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("%s: %d %s", op, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		s.t.Fatalf("%s: Content-Type %q", op, ct)
	}
	var all []json.RawMessage
	var callID string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		all = append(all, append(json.RawMessage(nil), sc.Bytes()...))
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			s.t.Fatalf("%s: a line is not JSON: %s", op, sc.Bytes())
		}
		switch {
		case l.Call != "":
			callID = l.Call
		case l.Progress != nil:
			var p map[string]any
			json.Unmarshal(l.Progress, &p)
			if onProgress == nil {
				s.t.Fatalf("%s: progress without asking for it: %s", op, sc.Bytes())
			}
			onProgress(callID, p)
		default:
			if sc.Scan() {
				s.t.Fatalf("%s: a line after the last: %s", op, sc.Bytes())
			}
			return l, all
		}
	}
	s.t.Fatalf("%s: the stream ended without a result: %v", op, sc.Err())
	return line{}, nil
}

// result runs a call that must succeed with no failure.
func (s *service) result(id, op string, body map[string]any) *conversation {
	s.t.Helper()
	l, _ := s.call(id, op, body, nil)
	if l.Result == nil || len(l.Failures) > 0 {
		s.t.Fatalf("%s: %+v", op, l)
	}
	return l.Result
}

func texts(c *conversation) string {
	var out []string
	for _, r := range c.Replies {
		out = append(out, r.Text)
	}
	return strings.Join(out, " | ")
}
