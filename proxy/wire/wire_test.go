package wire

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
)

// summary renders events one per line, for comparison.
func summary(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		switch e.Kind {
		case KindText:
			fmt.Fprintf(&b, "text %q\n", e.Text)
		case KindToolCall:
			inv := ""
			if e.Tool.Invalid {
				inv = " invalid"
			}
			fmt.Fprintf(&b, "tool %s %s %s%s\n", e.Tool.ID, e.Tool.Name, e.Tool.Args, inv)
		case KindFinish:
			fmt.Fprintf(&b, "finish %s truncated=%v in=%d out=%d\n", e.Finish.Reason, e.Finish.Truncated, e.Finish.InputTokens, e.Finish.OutputTokens)
		case KindError:
			fmt.Fprintf(&b, "error %d %s %s\n", e.Error.Status, e.Error.Type, e.Error.Message)
		}
	}
	return b.String()
}

// parse feeds body to a Parser in pieces of at most n bytes (0: whole).
func parse(d Dialect, status int, ctype, body string, n int) string {
	var evs []Event
	p := NewParser(d, status, ctype, func(e Event) { evs = append(evs, e) })
	for len(body) > 0 {
		k := len(body)
		if n > 0 {
			k = min(k, n)
		}
		p.Write([]byte(body[:k]))
		body = body[k:]
	}
	p.Close()
	return summary(evs)
}

func file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const sse = "text/event-stream; charset=utf-8"

func TestParser(t *testing.T) {
	chunk := func(delta string) string {
		return `data: {"choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	tests := []struct {
		name   string
		d      Dialect
		status int
		ctype  string
		body   string
		want   string
	}{
		{"anthropic stream", Anthropic, 200, sse, file(t, "anthropic.sse"),
			"text \"Reading it.\"\ntool toolu_fake_01 open_file {\"path\": \"a.txt\"}\nfinish tool_use truncated=false in=42 out=17\n"},
		{"openai chat stream", OpenAIChat, 200, sse, file(t, "openai-chat.sse"),
			"text \"Reading it.\"\ntool call_fake_1 open_file {\"path\":\"a.txt\"}\nfinish tool_calls truncated=false in=42 out=17\n"},
		{"openai responses stream", OpenAIResponses, 200, sse, file(t, "openai-responses.sse"),
			"text \"Reading it.\"\ntool call_f1 open_file {\"path\":\"a.txt\"}\nfinish completed truncated=false in=42 out=17\n"},
		{"ai sdk stream", AISDK, 200, sse, file(t, "ai-sdk.sse"),
			"text \"Reading it.\"\ntool call_f1 open_file {\"path\":\"a.txt\"}\nfinish tool-calls truncated=false in=42 out=17\n"},
		{"crlf lines and data without a space", Anthropic, 200, sse,
			"event: message_start\r\ndata:{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\r\n\r\nevent: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\r\n\r\nevent: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n",
			"finish max_tokens truncated=true in=3 out=9\n"},
		{"anthropic error after a 200", Anthropic, 200, sse,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			"error 200 overloaded_error Overloaded\n"},
		{"anthropic 529", Anthropic, 529, "application/json",
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			"error 529 overloaded_error Overloaded\n"},
		{"openai 429", OpenAIChat, 429, "application/json",
			`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			"error 429 requests Rate limit reached\n"},
		{"an error status with a text body", OpenAIChat, 502, "text/html", "<html>bad gateway</html>",
			"error 502  <html>bad gateway</html>\n"},
		{"stream cut before the finish", Anthropic, 200, sse, file(t, "anthropic.sse")[:1200],
			"text \"Reading it.\"\nerror 200 stream_cut the stream ended before the model's finish\n"},
		{"openai chat error in the stream", OpenAIChat, 200, sse,
			chunk(`{"content":"Hi"}`) + `data: {"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}` + "\n\n",
			"text \"Hi\"\nerror 200 server_error The server had an error\n"},
		{"openai chat without index, name after arguments, no [DONE]", OpenAIChat, 200, sse,
			chunk(`{"tool_calls":[{"function":{"arguments":"{\"q\":"}}]}`) +
				chunk(`{"tool_calls":[{"function":{"arguments":"1}"}}]}`) +
				chunk(`{"tool_calls":[{"id":"c9","function":{"name":"search"}}]}`) +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
			"tool c9 search {\"q\":1}\nfinish tool_calls truncated=false in=0 out=0\n"},
		{"openai chat parallel calls on one index, told apart by id", OpenAIChat, 200, sse,
			chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":"{}"}}]}`) +
				chunk(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"two","arguments":"{\"x\":2}"}}]}`) +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			"tool a one {}\ntool b two {\"x\":2}\nfinish tool_calls truncated=false in=0 out=0\n"},
		{"openai chat index not starting at 0", OpenAIChat, 200, sse,
			chunk(`{"tool_calls":[{"index":1,"id":"a","function":{"name":"one","arguments":"{\"a\""}}]}`) +
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":true}"}}]}`) +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n",
			"tool a one {\"a\":true}\nfinish length truncated=true in=0 out=0\n"},
		{"truncated arguments", OpenAIChat, 200, sse,
			chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"one","arguments":"{\"a\":"}}]}`) +
				`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n",
			"tool a one \"{\\\"a\\\":\" invalid\nfinish length truncated=true in=0 out=0\n"},
		{"responses incomplete", OpenAIResponses, 200, sse,
			"event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"},\"usage\":{\"input_tokens\":5,\"output_tokens\":100}}}\n\n",
			"finish max_output_tokens truncated=true in=5 out=100\n"},
		{"responses nested error event", OpenAIResponses, 200, sse,
			"event: error\ndata: {\"type\":\"error\",\"sequence_number\":2,\"error\":{\"type\":\"invalid_request_error\",\"code\":\"bad\",\"message\":\"nope\",\"param\":null}}\n\n",
			"error 200 invalid_request_error nope\n"},
		{"ai sdk v2 finish", AISDK, 200, sse,
			`data: {"type":"finish","finishReason":"length","usage":{"inputTokens":4,"outputTokens":8,"totalTokens":12}}` + "\n\n",
			"finish length truncated=true in=4 out=8\n"},
		{"anthropic json", Anthropic, 200, "application/json",
			`{"id":"msg_1","type":"message","content":[{"type":"text","text":"Reading it."},{"type":"tool_use","id":"toolu_1","name":"open_file","input":{"path":"a.txt"}}],"stop_reason":"tool_use","usage":{"input_tokens":42,"output_tokens":17}}`,
			"text \"Reading it.\"\ntool toolu_1 open_file {\"path\":\"a.txt\"}\nfinish tool_use truncated=false in=42 out=17\n"},
		{"openai chat json", OpenAIChat, 200, "application/json",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"open_file","arguments":"{\"path\":\"a.txt\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":42,"completion_tokens":17}}`,
			"tool call_1 open_file {\"path\":\"a.txt\"}\nfinish tool_calls truncated=false in=42 out=17\n"},
		{"openai responses json", OpenAIResponses, 200, "application/json",
			`{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]},{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}],"usage":{"input_tokens":1,"output_tokens":2}}`,
			"text \"Hi\"\ntool call_1 f {}\nfinish completed truncated=false in=1 out=2\n"},
		{"ai sdk json", AISDK, 200, "application/json",
			`{"content":[{"type":"text","text":"{\"profile\":\"fast\"}"}],"finishReason":{"unified":"stop","raw":"end_turn"},"usage":{"inputTokens":{"total":50},"outputTokens":{"total":9}}}`,
			"text \"{\\\"profile\\\":\\\"fast\\\"}\"\nfinish stop truncated=false in=50 out=9\n"},
		{"a 200 that is not JSON", AISDK, 200, "application/json", "not json",
			"error 200 unparsed the response is not a JSON object\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := parse(tt.d, tt.status, tt.ctype, tt.body, 0)
			if whole != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", whole, tt.want)
			}
			if got := parse(tt.d, tt.status, tt.ctype, tt.body, 1); got != whole {
				t.Fatalf("byte by byte got\n%s\nwhole got\n%s", got, whole)
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				if got := parse(tt.d, tt.status, tt.ctype, tt.body, 1+r.IntN(64)); got != whole {
					t.Fatalf("in pieces got\n%s\nwhole got\n%s", got, whole)
				}
			}
		})
	}
}

func TestEventOverLimitStopsOnce(t *testing.T) {
	var evs []Event
	p := NewParser(Anthropic, 200, sse, func(e Event) { evs = append(evs, e) })
	p.Write([]byte("data: " + strings.Repeat("x", 1<<20)))
	for range 17 {
		p.Write([]byte(strings.Repeat("x", 1<<20)))
	}
	p.Write([]byte("\n\n"))
	p.Close()
	if len(evs) != 1 || evs[0].Kind != KindError || !strings.Contains(evs[0].Error.Message, "16 MiB") {
		t.Fatalf("got %s", summary(evs))
	}
}

func TestDialectOf(t *testing.T) {
	for path, want := range map[string]Dialect{
		"/v1/messages":                 Anthropic,
		"/anthropic/v1/messages":       Anthropic,
		"/v1/chat/completions":         OpenAIChat,
		"/openai/v1/chat/completions/": OpenAIChat,
		"/v1/responses":                OpenAIResponses,
		"/v3/ai/language-model":        AISDK,
		"/v1/ai/language-model":        AISDK,
		"/v1/embeddings":               "",
		"/api/chat.postMessage":        "",
		"/v1/messages/count_tokens":    "",
	} {
		if got := DialectOf(path); got != want {
			t.Errorf("DialectOf(%q) = %q; want %q", path, got, want)
		}
	}
}

func TestParseRequest(t *testing.T) {
	h := http.Header{}
	h.Set("ai-language-model-id", "anthropic/claude-sonnet-4")
	h.Set("ai-language-model-streaming", "true")
	tests := []struct {
		d    Dialect
		body string
		want string
	}{
		{Anthropic, `{"model":"claude-x","stream":true,"system":[{"type":"text","text":"You are Junior."}],"tools":[{"name":"webFetch"},{"name":"bash"}]}`,
			"anthropic claude-x stream=true tools=[webFetch bash] structured=false system=You are Junior."},
		{OpenAIChat, `{"model":"gpt-x","messages":[{"role":"system","content":"Title this."}],"response_format":{"type":"json_schema"}}`,
			"openai-chat gpt-x stream=false tools=[] structured=true system=Title this."},
		{OpenAIResponses, `{"model":"gpt-y","stream":true,"instructions":"Route it.","tools":[{"type":"function","name":"f"}]}`,
			"openai-responses gpt-y stream=true tools=[f] structured=false system=Route it."},
		// A built-in tool has no name to report.
		{OpenAIResponses, `{"model":"gpt-y","instructions":"Route it.","tools":[{"type":"web_search"},{"type":"function","name":"f"}]}`,
			"openai-responses gpt-y stream=false tools=[f] structured=false system=Route it."},
		{AISDK, `{"prompt":[{"role":"system","content":"You choose the execution profile"}],"responseFormat":{"type":"json"}}`,
			"ai-sdk anthropic/claude-sonnet-4 stream=true tools=[] structured=true system=You choose the execution profile"},
		{Anthropic, `{"model":"claude-x","output_config":{"format":{"type":"json_schema","schema":{}}}}`,
			"anthropic claude-x stream=false tools=[] structured=true system="},
		{Anthropic, `{"model":"claude-x","output_format":{"type":"json_schema","schema":{}}}`,
			"anthropic claude-x stream=false tools=[] structured=true system="},
		{Anthropic, `not json`, "anthropic  stream=false tools=[] structured=false system="},
	}
	for _, tt := range tests {
		r := ParseRequest(tt.d, h, []byte(tt.body))
		got := fmt.Sprintf("%s %s stream=%v tools=%v structured=%v system=%s", r.Dialect, r.Model, r.Stream, r.Tools, r.Structured, r.System)
		if got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

func FuzzParser(f *testing.F) {
	for _, name := range []string{"anthropic.sse", "openai-chat.sse", "openai-responses.sse", "ai-sdk.sse"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0), uint8(7))
	}
	f.Add([]byte(`{"content":[{"type":"tool_use","input":{}}]}`), uint8(4), uint8(0))
	dialects := []Dialect{Anthropic, OpenAIChat, OpenAIResponses, AISDK}
	f.Fuzz(func(t *testing.T, body []byte, which, split uint8) {
		d := dialects[int(which)%len(dialects)]
		for _, ctype := range []string{sse, "application/json"} {
			n := 0
			p := NewParser(d, 200, ctype, func(e Event) {
				n++
				if e.Kind == KindToolCall && !json.Valid(e.Tool.Args) {
					t.Fatalf("tool args are not JSON: %s", e.Tool.Args)
				}
			})
			rest := body
			for len(rest) > 0 {
				k := min(len(rest), int(split)+1)
				p.Write(rest[:k])
				rest = rest[k:]
			}
			p.Close()
			ParseRequest(d, http.Header{}, body)
		}
	})
}

// Every dialect's usage comes out counted one way: InputTokens holds the
// cache reads and writes, as billing needs (Anthropic reports them
// apart, OpenAI inside its input count).
func TestUsageIsCountedOneWay(t *testing.T) {
	want := Finish{InputTokens: 1000, OutputTokens: 50, CacheReadTokens: 600, CacheWriteTokens: 100}
	tests := []struct {
		name   string
		d      Dialect
		ctype  string
		body   string
		server map[string]int
	}{
		{"anthropic stream, cache in message_start", Anthropic, sse,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":300,\"output_tokens\":1,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":600}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":50,\"server_tool_use\":{\"web_search_requests\":2}}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", map[string]int{"web_search": 2}},
		{"anthropic stream, counts repeated in message_delta", Anthropic, sse,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":300,\"output_tokens\":1}}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":300,\"output_tokens\":50,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":600}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", nil},
		{"anthropic json", Anthropic, "application/json",
			`{"content":[],"stop_reason":"end_turn","usage":{"input_tokens":300,"output_tokens":50,"cache_creation_input_tokens":100,"cache_read_input_tokens":600,"server_tool_use":{"web_search_requests":1,"web_fetch_requests":3}}}`,
			map[string]int{"web_search": 1, "web_fetch": 3}},
		{"openai chat stream, usage chunk", OpenAIChat, sse,
			`data: {"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}` + "\n\n" +
				`data: {"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":600,"cache_write_tokens":100}}}` + "\n\ndata: [DONE]\n\n", nil},
		{"openai chat json", OpenAIChat, "application/json",
			`{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":600,"cache_write_tokens":100}}}`, nil},
		{"openai responses json, a web search", OpenAIResponses, "application/json",
			`{"status":"completed","output":[{"type":"web_search_call","id":"ws_1","status":"completed"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}],"usage":{"input_tokens":1000,"output_tokens":50,"input_tokens_details":{"cached_tokens":600,"cache_write_tokens":100}}}`,
			map[string]int{"web_search": 1}},
		{"openai responses stream", OpenAIResponses, sse,
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1000,\"output_tokens\":50,\"input_tokens_details\":{\"cached_tokens\":600,\"cache_write_tokens\":100}}}}\n\n", nil},
		{"ai sdk v3 nested", AISDK, sse,
			`data: {"type":"finish","finishReason":{"unified":"stop","raw":"end_turn"},"usage":{"inputTokens":{"total":1000,"noCache":300,"cacheRead":600,"cacheWrite":100},"outputTokens":{"total":50,"text":50}}}` + "\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Finish
			p := NewParser(tt.d, 200, tt.ctype, func(e Event) {
				if e.Kind == KindFinish {
					got = e.Finish
				}
			})
			p.Write([]byte(tt.body))
			p.Close()
			if got == nil {
				t.Fatal("no finish")
			}
			if got.InputTokens != want.InputTokens || got.OutputTokens != want.OutputTokens ||
				got.CacheReadTokens != want.CacheReadTokens || got.CacheWriteTokens != want.CacheWriteTokens {
				t.Errorf("usage in=%d out=%d cacheRead=%d cacheWrite=%d; want in=1000 out=50 cacheRead=600 cacheWrite=100",
					got.InputTokens, got.OutputTokens, got.CacheReadTokens, got.CacheWriteTokens)
			}
			if fmt.Sprint(got.ServerTools) != fmt.Sprint(tt.server) {
				t.Errorf("server tools %v, want %v", got.ServerTools, tt.server)
			}
		})
	}
}

func TestAISDKVersion2CachedTokens(t *testing.T) {
	var got *Finish
	p := NewParser(AISDK, 200, "application/json", func(e Event) { got = e.Finish })
	p.Write([]byte(`{"content":[],"finishReason":"stop","usage":{"inputTokens":1000,"outputTokens":50,"cachedInputTokens":600}}`))
	p.Close()
	if got == nil || got.InputTokens != 1000 || got.CacheReadTokens != 600 || got.OutputTokens != 50 {
		t.Fatalf("finish %+v", got)
	}
}
