package fakeai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy/wire"
)

// recordingTB is a testing.TB that keeps the failures it is told and the
// cleanups it is given, so a test can check what fakeai says and when:
// the one place a test double is right.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprint(args...))
}
func (r *recordingTB) Errorf(format string, args ...any) { r.Error(fmt.Sprintf(format, args...)) }
func (r *recordingTB) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }

// cleanup runs the cleanups as the testing package does, last first, and
// returns the failures they add.
func (r *recordingTB) cleanup() []string {
	n := len(r.said())
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r.said()[n:]
}

func (r *recordingTB) said() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// chat sends one Chat Completions request through the official SDK.
func chat(base string, params openai.ChatCompletionNewParams) (*openai.ChatCompletion, error) {
	client := openai.NewClient(openaioption.WithBaseURL(base+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(2))
	return client.Chat.Completions.New(context.Background(), params)
}

func TestUnscriptedPromptsAndUnusedScriptsFailTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	router := fakeai.Agent{Name: "router", SystemContains: "Route the message"}
	m.Respond(router, fakeai.Text("support"), fakeai.Text("billing"))
	srv := httptest.NewServer(m)
	defer srv.Close()

	// No agent matches: the client gets a provider error, once (no
	// retries), and the test fails now, naming the dialect and the prompt.
	_, err := chat(srv.URL, openai.ChatCompletionNewParams{Model: "gpt-fake", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("You write titles."), openai.UserMessage("Summarise the incident in five words")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("unscripted prompt: %v; want a 503 provider error", err)
	}
	said := rec.said()
	if len(said) != 1 || !strings.Contains(said[0], "unscripted prompt (openai-chat") || !strings.Contains(said[0], "no agent matches it") ||
		!strings.Contains(said[0], "Summarise the incident") {
		t.Fatalf("failures at the call %q", said)
	}

	// The router's first script answers; the second is never asked for.
	resp, err := chat(srv.URL, openai.ChatCompletionNewParams{Model: "gpt-fake", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.SystemMessage("Route the message to a team."), openai.UserMessage("my invoice is wrong")}})
	if err != nil || resp.Choices[0].Message.Content != "support" {
		t.Fatalf("scripted: %v %v", resp, err)
	}
	at := rec.cleanup()
	if len(at) != 2 || !strings.Contains(at[0], "Summarise the incident") ||
		!strings.Contains(at[1], `agent "router": 1 scripted answer never asked for (Text("billing")): the agent stopped before asking for it`) {
		t.Fatalf("failures at cleanup %q", at)
	}
}

func TestAnAgentWithNoAnswerLeftIsNamed(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	router := fakeai.Agent{Name: "router", Purpose: "text"}
	m.Respond(router, fakeai.Text("support"))
	srv := httptest.NewServer(m)
	defer srv.Close()
	params := openai.ChatCompletionNewParams{Model: "gpt-fake", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("route this")}}
	if _, err := chat(srv.URL, params); err != nil {
		t.Fatal(err)
	}
	if _, err := chat(srv.URL, params); err == nil {
		t.Fatal("a second prompt got an answer nobody scripted")
	}
	if said := rec.said(); len(said) != 1 || !strings.Contains(said[0], `agent "router" has no scripted answer left`) {
		t.Fatalf("failures %q", said)
	}
	rec.cleanup()
}

func TestStructuredOutputIsCheckedAgainstTheRequestsSchema(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	router := fakeai.Agent{Name: "router", Purpose: "structured"}
	m.Respond(router, fakeai.Output(map[string]string{"team": "support"}), fakeai.Output(map[string]string{"team": "sales"}))
	srv := httptest.NewServer(m)
	defer srv.Close()
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-fake",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("my invoice is wrong")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "route", Schema: map[string]any{
				"type": "object", "required": []string{"team"}, "additionalProperties": false,
				"properties": map[string]any{"team": map[string]any{"enum": []string{"support", "billing"}}}}}}},
	}
	resp, err := chat(srv.URL, params)
	if err != nil || resp.Choices[0].Message.Content != `{"team":"support"}` {
		t.Fatalf("a valid output: %v %v", resp, err)
	}
	if said := rec.said(); len(said) != 0 {
		t.Fatalf("a valid output failed the test: %q", said)
	}
	// "sales" is not in the enum: the real model could not have said it.
	if _, err := chat(srv.URL, params); err == nil {
		t.Fatal("an output that breaks the schema was answered")
	}
	if said := rec.said(); len(said) != 1 || !strings.Contains(said[0], `agent "router"`) || !strings.Contains(said[0], "does not fit the request's schema") {
		t.Fatalf("failures %q", said)
	}
	rec.cleanup()
}

// wireEvents reads a fake's answer with the proxy's parser, which shares
// no code with the fake: what the proxy sees of it.
func wireEvents(t *testing.T, d wire.Dialect, resp *http.Response) (text string, calls []wire.ToolCall, fin *wire.Finish) {
	t.Helper()
	var b strings.Builder
	p := wire.NewParser(d, resp.StatusCode, resp.Header.Get("Content-Type"), func(ev wire.Event) {
		switch ev.Kind {
		case wire.KindText:
			b.WriteString(ev.Text)
		case wire.KindToolCall:
			calls = append(calls, *ev.Tool)
		case wire.KindFinish:
			fin = ev.Finish
		case wire.KindError:
			t.Errorf("%s: error event %+v", d, ev.Error)
		}
	})
	io.Copy(p, resp.Body)
	p.Close()
	return b.String(), calls, fin
}

func TestEveryDialectReadsAsTheProxyReadsIt(t *testing.T) {
	requests := map[wire.Dialect]struct {
		path, body string
	}{
		wire.Anthropic:       {"/v1/messages", `{"model":"m","max_tokens":10,"system":"S","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"lookup","input_schema":{}}]%s}`},
		wire.OpenAIChat:      {"/v1/chat/completions", `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"lookup"}}]%s}`},
		wire.OpenAIResponses: {"/v1/responses", `{"model":"m","instructions":"S","input":"hi","tools":[{"type":"function","name":"lookup"}]%s}`},
		wire.AISDK:           {"/v3/ai/language-model", `{"prompt":[{"role":"system","content":"S"},{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"type":"function","name":"lookup"}]}`},
	}
	agent := fakeai.Agent{Name: "a", SystemPrefix: "S", Tools: []string{"lookup"}}
	for d, req := range requests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", d, stream), func(t *testing.T) {
				m := fakeai.New(t)
				text := "Reading the status page, then answering — ü 日本"
				m.Respond(agent, fakeai.Text(text), fakeai.ToolCalls(fakeai.Call("lookup", map[string]any{"q": "dé ploy", "n": 2})), fakeai.Truncated("cut o"))
				srv := httptest.NewServer(m)
				defer srv.Close()
				send := func() *http.Response {
					body := req.body
					if d != wire.AISDK {
						body = fmt.Sprintf(body, map[bool]string{true: `,"stream":true`, false: ""}[stream])
					}
					r, _ := http.NewRequest("POST", srv.URL+req.path, bytes.NewReader([]byte(body)))
					r.Header.Set("ai-language-model-id", "m")
					r.Header.Set("ai-language-model-streaming", fmt.Sprint(stream))
					resp, err := http.DefaultClient.Do(r)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { resp.Body.Close() })
					return resp
				}
				got, calls, fin := wireEvents(t, d, send())
				// Chat streams carry usage only when asked (stream_options).
				if got != text || len(calls) != 0 || fin == nil || fin.Truncated || fin.OutputTokens == 0 && !(d == wire.OpenAIChat && stream) {
					t.Errorf("text: %q %v %+v", got, calls, fin)
				}
				_, calls, fin = wireEvents(t, d, send())
				var args map[string]any
				if len(calls) != 1 || calls[0].Name != "lookup" || json.Unmarshal(calls[0].Args, &args) != nil || args["q"] != "dé ploy" || fin == nil {
					t.Errorf("tool call: %+v %+v", calls, fin)
				}
				got, _, fin = wireEvents(t, d, send())
				if got != "cut o" || fin == nil || !fin.Truncated {
					t.Errorf("truncated: %q %+v", got, fin)
				}
			})
		}
	}
}

// A scripted usage reads back, as the proxy reads it, with the counts it
// was given, in every dialect, streamed or not.
func TestScriptedUsageReadsAsTheProxyReadsIt(t *testing.T) {
	requests := map[wire.Dialect]struct {
		path, body string
	}{
		wire.Anthropic:       {"/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]%s}`},
		wire.OpenAIChat:      {"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]%s}`},
		wire.OpenAIResponses: {"/v1/responses", `{"model":"m","input":"hi"%s}`},
		wire.AISDK:           {"/v3/ai/language-model", `{"prompt":[{"role":"user","content":[{"type":"text","text":"hi"}]}]%s}`},
	}
	u := fakeai.Usage{Input: 12000, Output: 345, CacheRead: 8000, CacheWrite: 1500, WebSearches: 2}
	for d, req := range requests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", d, stream), func(t *testing.T) {
				m := fakeai.New(t)
				m.Respond(fakeai.Agent{Name: "a"}, fakeai.Text("ok").WithUsage(u))
				srv := httptest.NewServer(m)
				defer srv.Close()
				extra := ""
				if stream && d != wire.AISDK {
					extra = `,"stream":true,"stream_options":{"include_usage":true}`
				}
				r, _ := http.NewRequest("POST", srv.URL+req.path, strings.NewReader(fmt.Sprintf(req.body, extra)))
				r.Header.Set("ai-language-model-id", "m")
				r.Header.Set("ai-language-model-streaming", fmt.Sprint(stream))
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				_, _, fin := wireEvents(t, d, resp)
				if fin == nil {
					t.Fatal("no finish")
				}
				if fin.InputTokens != 12000 || fin.OutputTokens != 345 || fin.CacheReadTokens != 8000 || fin.CacheWriteTokens != 1500 {
					t.Errorf("usage %+v", fin)
				}
				// Server-side searches exist in Anthropic's usage and as
				// Responses items; the others have no way to say them.
				wantSearches := map[wire.Dialect]int{wire.Anthropic: 2, wire.OpenAIResponses: 2}[d]
				if fin.ServerTools["web_search"] != wantSearches {
					t.Errorf("server tools %v, want %d web searches", fin.ServerTools, wantSearches)
				}
			})
		}
	}
}

func TestAUsageThatCannotBeIsRefused(t *testing.T) {
	var r fakeai.Response
	if err := json.Unmarshal([]byte(`{"text":"x","usage":{"input":10,"output":1,"cacheRead":20}}`), &r); err == nil || !strings.Contains(err.Error(), "at least their sum") {
		t.Fatalf("err %v", err)
	}
	if err := json.Unmarshal([]byte(`{"text":"x","usage":{"input":30,"output":1,"cacheRead":20}}`), &r); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"usage":{"input":30,"output":1,"cacheRead":20}`) {
		t.Fatalf("marshalled %s", b)
	}
}

func TestResponsesAsTheControlAPITakesThem(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"text":"hi"}`, `Text("hi")`},
		{`{"output":{"team":"support"}}`, `Output({"team":"support"})`},
		{`{"toolCalls":[{"name":"lookup","input":{"q":"x"}}],"then":{"text":"done"}}`, `ToolCalls(lookup).Then(Text("done"))`},
		{`{"truncated":"cut"}`, `Truncated("cut")`},
		{`{"providerError":529}`, `ProviderError(529)`},
	} {
		var r fakeai.Response
		if err := json.Unmarshal([]byte(tt.in), &r); err != nil || r.String() != tt.want {
			t.Errorf("%s: %v %v; want %s", tt.in, r, err, tt.want)
			continue
		}
		b, _ := json.Marshal(r)
		var again fakeai.Response
		if err := json.Unmarshal(b, &again); err != nil || again.String() != tt.want {
			t.Errorf("%s: round trip %s: %v %v", tt.in, b, again, err)
		}
	}
	for _, bad := range []string{`{}`, `{"text":"a","truncated":"b"}`, `{"providerError":200}`, `{"toolCalls":[{"input":{}}]}`, `{"txt":"a"}`} {
		var r fakeai.Response
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s: accepted as %v", bad, r)
		}
	}
}
