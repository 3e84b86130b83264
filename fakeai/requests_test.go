package fakeai_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentvcr/agentvcr/fakeai"
)

// Conversations of one agent run at once, as threads do. Each gets the
// follow-up scripted after the tool call it was given, however their
// prompts interleave.
func TestInterleavedConversationsGetTheirOwnFollowUps(t *testing.T) {
	m := fakeai.New(t)
	agent := fakeai.Agent{Name: "support", Tools: []string{"lookup"}}
	const n = 8
	for i := range n {
		svc := fmt.Sprintf("svc-%d", i)
		m.Respond(agent, fakeai.ToolCalls(fakeai.Call("lookup", map[string]string{"q": svc})).Then(fakeai.Text(svc+" is deployed")))
	}
	srv := httptest.NewServer(m)
	defer srv.Close()
	client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("sk-ant-fake"), anthropicoption.WithMaxRetries(0))
	// All first prompts go out before any second one, so every follow-up
	// is queued while the others wait.
	var firsts sync.WaitGroup
	firsts.Add(n)
	errs := make(chan error, n)
	for range n {
		go func() {
			errs <- func() error {
				params := anthropic.MessageNewParams{
					Model: "claude-fake", MaxTokens: 256,
					Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("status?"))},
					Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup", InputSchema: anthropic.ToolInputSchemaParam{}}}},
				}
				first, err := client.Messages.New(context.Background(), params)
				firsts.Done()
				if err != nil {
					return err
				}
				if len(first.Content) != 1 || first.Content[0].Type != "tool_use" {
					return fmt.Errorf("first answer %+v", first.Content)
				}
				var in struct{ Q string }
				if err := json.Unmarshal(first.Content[0].Input, &in); err != nil {
					return err
				}
				firsts.Wait()
				params.Messages = append(params.Messages, first.ToParam(),
					anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[0].ID, "ok", false)))
				second, err := client.Messages.New(context.Background(), params)
				if err != nil {
					return err
				}
				if len(second.Content) != 1 || second.Content[0].Text != in.Q+" is deployed" {
					return fmt.Errorf("the conversation that looked up %s was answered %+v", in.Q, second.Content)
				}
				return nil
			}()
		}()
	}
	for i := range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d conversations did not end within 10 s", n-i, n)
		}
	}
	if got := len(m.Calls(agent)); got != 2*n {
		t.Fatalf("%d calls; want %d", got, 2*n)
	}
}

// post sends body to the fake at path and returns the status and what
// the body said.
func post(t *testing.T, method, url, body string, h http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// A scripted call to a tool the request does not offer is one the real
// model could not make: the call fails and so does the test.
func TestAToolTheRequestDoesNotOfferFailsTheCall(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	m.Respond(fakeai.Agent{Name: "support"}, fakeai.ToolCalls(fakeai.Call("deleteEverything", map[string]any{})))
	srv := httptest.NewServer(m)
	defer srv.Close()
	status, body := post(t, "POST", srv.URL+"/v1/messages",
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"lookup","input_schema":{}}]}`, nil)
	if status != http.StatusInternalServerError || !strings.Contains(body, "deleteEverything") {
		t.Fatalf("%d %s", status, body)
	}
	said := rec.said()
	if len(said) != 1 || !strings.Contains(said[0], `agent "support"`) || !strings.Contains(said[0], "deleteEverything") || !strings.Contains(said[0], "lookup") {
		t.Fatalf("failures %q", said)
	}
}

func TestMalformedRequestsAreRefusedAndReported(t *testing.T) {
	huge := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"` + strings.Repeat("a", 33<<20) + `"}]}`
	tests := []struct {
		name, method, path, body string
		status                   int
		says                     string
	}{
		{"get", "GET", "/v1/messages", "", 405, "take POST"},
		{"not json", "POST", "/v1/messages", `{"model":`, 400, "not JSON"},
		{"anthropic without messages", "POST", "/v1/messages", `{"model":"m","max_tokens":5}`, 400, `"messages"`},
		{"anthropic without max_tokens", "POST", "/v1/messages", `{"model":"m","messages":[]}`, 400, `"max_tokens"`},
		{"chat with messages a string", "POST", "/v1/chat/completions", `{"model":"m","messages":"hi"}`, 400, `"messages"`},
		{"responses without input", "POST", "/v1/responses", `{"model":"m"}`, 400, `"input"`},
		{"ai sdk without prompt", "POST", "/language-model", `{}`, 400, `"prompt"`},
		{"embeddings without input", "POST", "/v1/embeddings", `{"model":"e"}`, 400, `"input"`},
		{"images without prompt", "POST", "/v1/images/generations", `{"model":"i"}`, 400, `"prompt"`},
		{"anthropic tool_use with no result", "POST", "/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":"go on"}]}`, 400, "without tool_result blocks immediately after: toolu_1"},
		{"chat tool_calls with no tool message", "POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"},
			{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"go on"}]}`, 400, "call_1 has none"},
		{"not a model route", "POST", "/v2/whatever", `{}`, 404, "not a model route"},
		{"over 32 MiB", "POST", "/v1/messages", huge, 413, "over 32 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			srv := httptest.NewServer(fakeai.New(rec))
			defer srv.Close()
			status, body := post(t, tt.method, srv.URL+tt.path, tt.body, nil)
			body = strings.ReplaceAll(body, `\"`, `"`)
			if status != tt.status || !strings.Contains(body, tt.says) {
				t.Errorf("%d %.200s; want %d saying %s", status, body, tt.status, tt.says)
			}
			said := rec.said()
			if len(said) != 1 || !strings.Contains(said[0], tt.path) || !strings.Contains(said[0], tt.says) {
				t.Errorf("failures %.300q", said)
			}
		})
	}
}

// An unscripted prompt is one failure, not one per retry: the OpenAI and
// Anthropic SDKs honour x-should-retry, and the AI SDK, which retries
// every 5xx, gets a 400.
func TestAnUnscriptedPromptIsNotRetried(t *testing.T) {
	tests := []struct {
		path, body string
		h          http.Header
		status     int
	}{
		{"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, nil, 503},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil, 503},
		{"/v1/responses", `{"model":"m","input":"hi"}`, nil, 503},
		{"/language-model", `{"prompt":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, http.Header{"Ai-Language-Model-Id": {"m"}}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			m := fakeai.New(rec)
			srv := httptest.NewServer(m)
			defer srv.Close()
			req, _ := http.NewRequest("POST", srv.URL+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.h {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("x-should-retry") != "false" {
				t.Errorf("%d x-should-retry=%q; want %d and false", resp.StatusCode, resp.Header.Get("x-should-retry"), tt.status)
			}
			if said := rec.said(); len(said) != 1 || !strings.Contains(said[0], "unscripted prompt") {
				t.Errorf("failures %q", said)
			}
		})
	}
}

func TestScriptingMistakesAreSaid(t *testing.T) {
	panics := map[string]func(){
		"ProviderError(200)":  func() { fakeai.ProviderError(200) },
		"ProviderError(600)":  func() { fakeai.ProviderError(600) },
		"ToolCalls()":         func() { fakeai.ToolCalls() },
		"Call with a string":  func() { fakeai.Call("lookup", "svc") },
		"Call with a channel": func() { fakeai.Call("lookup", make(chan int)) },
		"Call with an array":  func() { fakeai.Call("lookup", json.RawMessage(`[1]`)) },
	}
	for name, f := range panics {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "fakeai.") {
					t.Errorf("recovered %v; want a fakeai panic", r)
				}
			}()
			f()
		})
	}
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	m.Respond(fakeai.Agent{Name: "router", Purpose: "routing"}, fakeai.Text("x"))
	m.Respond(fakeai.Agent{Name: "support", Model: "a"}, fakeai.Text("x"))
	m.Respond(fakeai.Agent{Name: "support", Model: "b"}, fakeai.Text("y"))
	said := rec.said()
	if len(said) != 2 || !strings.Contains(said[0], `purpose "routing"`) || !strings.Contains(said[1], `agent "support" scripted again`) {
		t.Fatalf("failures %q", said)
	}
	if err := (fakeai.Agent{Purpose: "agent"}).Validate(); err == nil {
		t.Error("an agent with no name was valid")
	}
	m.DropUnused()
}

// The end of a test scope drops what it left unused: the next test's
// prompt is not answered from the last test's script. Reset forgets all.
func TestDropUnusedAndReset(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	agent := fakeai.Agent{Name: "support"}
	m.Respond(agent, fakeai.Text("first"), fakeai.Text("left over"))
	m.RespondEmbeddings([]float32{1, 0})
	srv := httptest.NewServer(m)
	defer srv.Close()
	prompt := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	if status, body := post(t, "POST", srv.URL+"/v1/chat/completions", prompt, nil); status != 200 || !strings.Contains(body, "first") {
		t.Fatalf("%d %s", status, body)
	}
	unused := m.DropUnused()
	if len(unused) != 2 || !strings.Contains(unused[0], "left over") || !strings.Contains(unused[1], "vector") {
		t.Fatalf("unused %q", unused)
	}
	if status, _ := post(t, "POST", srv.URL+"/v1/chat/completions", prompt, nil); status != 503 {
		t.Fatalf("a dropped answer was given: %d", status)
	}
	if len(m.Calls(agent)) != 1 || len(m.Failures()) != 1 {
		t.Fatalf("calls %d failures %q", len(m.Calls(agent)), m.Failures())
	}
	m.Reset()
	if len(m.AllCalls()) != 0 || len(m.Failures()) != 0 || len(m.Problems()) != 0 {
		t.Fatalf("after Reset: calls %v failures %q problems %q", m.AllCalls(), m.Failures(), m.Problems())
	}
	if got := rec.cleanup(); len(got) != 0 {
		t.Fatalf("cleanup after Reset said %q", got)
	}
}

// A client that stops reading stops the stream: the fake writes nothing
// more once the request's context ends, so a long scripted answer does
// not keep a handler (or the proxy's in-process pipe) busy.
func TestAStreamStopsWhenTheClientGoesAway(t *testing.T) {
	m := fakeai.New(t)
	m.Respond(fakeai.Agent{Name: "talker"}, fakeai.Text(strings.Repeat("word ", 1<<20)))
	returned := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countingWriter{ResponseWriter: w, ctx: r.Context()}
		m.ServeHTTP(cw, r)
		returned <- cw.afterDone()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"talk"}]}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case after := <-returned:
		// One write may pass the context check just before it ends.
		if after > 1 {
			t.Fatalf("%d writes after the client went away", after)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream went on after the client went away")
	}
	if c := m.AllCalls(); len(c) != 1 || c[0].Done {
		t.Fatalf("calls %+v: an answer cut short is not done", c)
	}
}

// countingWriter counts the writes made after the request's context
// ended.
type countingWriter struct {
	http.ResponseWriter
	ctx   context.Context
	mu    sync.Mutex
	after int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	if w.ctx.Err() != nil {
		w.mu.Lock()
		w.after++
		w.mu.Unlock()
	}
	return w.ResponseWriter.Write(b)
}

func (w *countingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *countingWriter) afterDone() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.after
}
