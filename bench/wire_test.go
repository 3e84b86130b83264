package bench

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// streamEvents builds a streamed answer in each dialect: 200 text deltas,
// then one tool call whose arguments come in 100 deltas. It returns the
// events, each a separate write as a provider would flush it.
func streamEvents(d wire.Dialect) []string {
	var evs []string
	add := func(event, data string) {
		if event != "" {
			evs = append(evs, "event: "+event+"\ndata: "+data+"\n\n")
			return
		}
		evs = append(evs, "data: "+data+"\n\n")
	}
	full := `{\"q\":\"` + strings.Repeat("abc", 98) + `\"}`
	word := func(i int) string { return fmt.Sprintf("word%d ", i) }
	arg := func(i int) string {
		if i == 0 {
			return `{\"q\":\"`
		}
		if i == 99 {
			return `\"}`
		}
		return "abc"
	}
	switch d {
	case wire.Anthropic:
		add("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":900,"output_tokens":1}}}`)
		add("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for i := range 200 {
			add("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+word(i)+`"}}`)
		}
		add("content_block_stop", `{"type":"content_block_stop","index":0}`)
		add("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"webFetch","input":{}}}`)
		for i := range 100 {
			add("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"`+arg(i)+`"}}`)
		}
		add("content_block_stop", `{"type":"content_block_stop","index":1}`)
		add("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":400}}`)
		add("message_stop", `{"type":"message_stop"}`)
	case wire.OpenAIChat:
		c := func(delta, finish string) string {
			return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-x","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null}`
		}
		for i := range 200 {
			add("", c(`{"content":"`+word(i)+`"}`, "null"))
		}
		add("", c(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"webFetch","arguments":""}}]}`, "null"))
		for i := range 100 {
			add("", c(`{"tool_calls":[{"index":0,"function":{"arguments":"`+arg(i)+`"}}]}`, "null"))
		}
		add("", c(`{}`, `"tool_calls"`))
		add("", "[DONE]")
	case wire.OpenAIResponses:
		for i := range 200 {
			add("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"%s"}`, i, word(i)))
		}
		add("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"webFetch","arguments":""}}`)
		for i := range 100 {
			add("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"`+arg(i)+`"}`)
		}
		add("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"webFetch","arguments":"`+full+`"}}`)
		add("response.completed", `{"type":"response.completed","response":{"status":"completed","usage":{"input_tokens":900,"output_tokens":400}}}`)
	case wire.AISDK:
		for i := range 200 {
			add("", `{"type":"text-delta","id":"t1","delta":"`+word(i)+`"}`)
		}
		add("", `{"type":"tool-input-start","id":"call_1","toolName":"webFetch"}`)
		for i := range 100 {
			add("", `{"type":"tool-input-delta","id":"call_1","delta":"`+arg(i)+`"}`)
		}
		add("", `{"type":"tool-call","toolCallId":"call_1","toolName":"webFetch","input":"`+full+`"}`)
		add("", `{"type":"finish","finishReason":{"unified":"tool-calls","raw":"tool_use"},"usage":{"inputTokens":{"total":900},"outputTokens":{"total":400}}}`)
	}
	return evs
}

// BenchmarkWireParser measures what the progress parsers add to each SSE
// event of a stream, against plain passthrough: the same events written
// one by one through a pipe and copied to the client (io.Discard here),
// once as they are and once also fed to a wire.Parser, as the proxy does.
// It reports the added microseconds per event (target < 50) and the ratio
// of the parsed stream's time to the plain one's.
func BenchmarkWireParser(b *testing.B) {
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses, wire.AISDK} {
		evs := streamEvents(d)
		run := func(parse bool) time.Duration {
			pr, pw := io.Pipe()
			go func() {
				for _, e := range evs {
					io.WriteString(pw, e)
				}
				pw.Close()
			}()
			start := time.Now()
			var dst io.Writer = io.Discard
			var p *wire.Parser
			if parse {
				p = wire.NewParser(d, 200, "text/event-stream", func(wire.Event) {})
				dst = io.MultiWriter(io.Discard, p)
			}
			io.Copy(dst, pr)
			if p != nil {
				p.Close()
			}
			return time.Since(start)
		}
		b.Run(string(d), func(b *testing.B) {
			var plain, parsed time.Duration
			for b.Loop() {
				plain += run(false)
				parsed += run(true)
			}
			n := float64(b.N * len(evs))
			b.ReportMetric(float64((parsed-plain).Microseconds())/n, "added-µs/event")
			b.ReportMetric(float64(parsed)/float64(plain), "ratio")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func TestStreamEventsParse(t *testing.T) {
	for _, d := range []wire.Dialect{wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses, wire.AISDK} {
		var kinds []string
		p := wire.NewParser(d, 200, "text/event-stream", func(e wire.Event) {
			if e.Kind != wire.KindText {
				kinds = append(kinds, string(e.Kind))
			}
			if e.Kind == wire.KindToolCall && string(e.Tool.Args) != `{"q":"`+strings.Repeat("abc", 98)+`"}` {
				t.Errorf("%s: args %s", d, e.Tool.Args)
			}
		})
		for _, e := range streamEvents(d) {
			p.Write([]byte(e))
		}
		p.Close()
		if strings.Join(kinds, ",") != "tool_call,finish" {
			t.Errorf("%s: events %v", d, kinds)
		}
	}
}
