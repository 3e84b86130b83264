package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/slack-go/slack"
)

// sse writes server-sent events, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprint(w, e+"\n\n")
		w.(http.Flusher).Flush()
	}
}

// providers is a local stand-in for the model providers and Slack,
// speaking their wire formats, counting its requests.
func providers(hits *atomic.Int64) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		chunk := func(delta, finish string) string {
			return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
		}
		sse(w,
			chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"webFetch","arguments":""}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"url\":"}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"https://"}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"example"}}]}`, "null"),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":".com\"}"}}]}`, "null"),
			chunk(`{}`, `"tool_calls"`),
			`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`,
			"data: [DONE]")
	})
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		ev := func(typ, data string) string {
			return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + data + "}"
		}
		sse(w,
			ev("response.created", `"sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1790000000,"status":"in_progress","model":"gpt-test","output":[]}`),
			ev("response.output_item.added", `"sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"webFetch","arguments":"","status":"in_progress"}`),
			ev("response.function_call_arguments.delta", `"sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"url\":"`),
			ev("response.function_call_arguments.delta", `"sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"\"https://example"`),
			ev("response.function_call_arguments.delta", `"sequence_number":4,"item_id":"fc_1","output_index":0,"delta":".com\"}"`),
			ev("response.function_call_arguments.done", `"sequence_number":5,"item_id":"fc_1","output_index":0,"name":"webFetch","arguments":"{\"url\":\"https://example.com\"}"`),
			ev("response.output_item.done", `"sequence_number":6,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"webFetch","arguments":"{\"url\":\"https://example.com\"}","status":"completed"}`),
			ev("response.completed", `"sequence_number":7,"response":{"id":"resp_1","object":"response","created_at":1790000000,"status":"completed","model":"gpt-test","output":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"webFetch","arguments":"{\"url\":\"https://example.com\"}","status":"completed"}],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":19}}`))
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		sse(w,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"webFetch\",\"input\":{}}}",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"url\\\": \"}}",
			"event: ping\ndata: {\"type\":\"ping\"}",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"https://exa\"}}",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"mple.com\\\"}\"}}",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}")
	})
	mux.HandleFunc("POST /api/chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ok":true,"channel":%q,"ts":"1790000001.000200","message":{"text":%q}}`, r.Form.Get("channel"), r.Form.Get("text"))
	})
	mux.HandleFunc("POST /v3/ai/language-model", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"content":[{"type":"tool-call","toolCallId":"call_1","toolName":"webFetch","input":"{\"url\":\"https://example.com\"}"}],"finishReason":{"unified":"tool-calls","raw":"tool_use"},"usage":{"inputTokens":{"total":12},"outputTokens":{"total":7}},"warnings":[]}`)
	})
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from upstream") })
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
}

// anthropicClient is the Anthropic SDK through hc, without retries.
func anthropicClient(hc *http.Client, base string) anthropic.Client {
	return anthropic.NewClient(anthropicoption.WithBaseURL(base), anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(hc), anthropicoption.WithMaxRetries(0))
}

// openaiClient is the OpenAI SDK through hc, with the given retries.
func openaiClient(hc *http.Client, base string, retries int) openai.Client {
	return openai.NewClient(openaioption.WithBaseURL(base+"/v1/"), openaioption.WithAPIKey("sk-test"),
		openaioption.WithHTTPClient(hc), openaioption.WithMaxRetries(retries))
}

// recordThenReplay runs call once live and once more with the upstream
// gone, and checks both runs saw the same thing.
func recordThenReplay(t *testing.T, call func(t *testing.T, client *http.Client, base string) string) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	dir := t.TempDir()
	p, client := front(t, up, ModeAuto, dir, Rule{Name: "all", URLPrefix: up.URL + "/"})
	live := call(t, client, up.URL)
	// The proxy finishes reading the upstream's body (and records it) a
	// moment after the client has what it wanted.
	for deadline := time.Now().Add(2 * time.Second); p.Stats().Recorded != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d; want 1", p.Stats().Recorded)
		}
	}
	up.Close()
	before := hits.Load()
	p, client = restart(t, up, p, func(p *Proxy) { p.Mode = ModeReplay })
	replayed := call(t, client, up.URL)
	if replayed != live || hits.Load() != before || p.Stats().Replayed != 1 {
		t.Fatalf("replay saw %q; live saw %q (upstream hits %d -> %d)", replayed, live, before, hits.Load())
	}
}

func TestOpenAISDKStreamWithToolCalls(t *testing.T) {
	recordThenReplay(t, func(t *testing.T, hc *http.Client, base string) string {
		client := openai.NewClient(openaioption.WithBaseURL(base+"/v1/"), openaioption.WithAPIKey("sk-test-"+strings.Repeat("k", 30)),
			openaioption.WithHTTPClient(hc), openaioption.WithMaxRetries(0))
		stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model:    "gpt-test",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("fetch example.com")},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		call := acc.Choices[0].Message.ToolCalls[0]
		return call.Function.Name + " " + call.Function.Arguments + " " + acc.Choices[0].FinishReason
	})
}

func TestAnthropicSDKStreamWithToolUse(t *testing.T) {
	recordThenReplay(t, func(t *testing.T, hc *http.Client, base string) string {
		client := anthropicClient(hc, base)
		stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
			Model:     "claude-test",
			MaxTokens: 100,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("fetch example.com"))},
		})
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		block := msg.Content[0]
		return block.Name + " " + string(block.Input) + " " + string(msg.StopReason)
	})
}

func TestSlackGo(t *testing.T) {
	recordThenReplay(t, func(t *testing.T, hc *http.Client, base string) string {
		api := slack.New("xoxb-"+strings.Repeat("1", 12)+"-"+strings.Repeat("t", 24), slack.OptionAPIURL(base+"/api/"), slack.OptionHTTPClient(hc))
		channel, ts, err := api.PostMessage("C0TEST0001", slack.MsgOptionText("deploy done", false))
		if err != nil {
			t.Fatal(err)
		}
		return channel + " " + ts
	})
}

func TestCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: apt-get install curl (.ci/run does)")
	}
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, client := front(t, up, ModeAuto, t.TempDir(), Rule{Name: "all", URLPrefix: up.URL + "/"})
	proxyURL, err := client.Transport.(*http.Transport).Proxy(&http.Request{URL: mustParse(up.URL)})
	if err != nil {
		t.Fatal(err)
	}
	caFile := p.CA.CertPath
	run := func() string {
		out, err := exec.Command("curl", "-sS", "-D", "-", "--proxy", proxyURL.String(), "--cacert", caFile, up.URL+"/hello").CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := run(); !strings.Contains(out, "hello from upstream") || !strings.Contains(strings.ToLower(out), "x-agentvcr: recorded") {
		t.Fatalf("curl live:\n%s", out)
	}
	up.Close()
	if out := run(); !strings.Contains(out, "hello from upstream") || !strings.Contains(strings.ToLower(out), "x-agentvcr: replayed") {
		t.Fatalf("curl replay:\n%s", out)
	}
}
