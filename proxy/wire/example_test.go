package wire_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// A streamed Anthropic response, fed to a Parser in the pieces it
// arrives in, comes out as the same events every dialect gives: text,
// a complete tool call, and the finish with its usage.
func ExampleNewParser() {
	body := `event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking it up."}}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"search","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"q\":\"refund\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

`
	p := wire.NewParser(wire.DialectOf("/v1/messages"), http.StatusOK, "text/event-stream", func(ev wire.Event) {
		switch ev.Kind {
		case wire.KindText:
			fmt.Printf("text %q\n", ev.Text)
		case wire.KindToolCall:
			fmt.Printf("tool %s %s\n", ev.Tool.Name, ev.Tool.Args)
		case wire.KindFinish:
			fmt.Printf("finish %s, %d tokens in, %d out\n", ev.Finish.Reason, ev.Finish.InputTokens, ev.Finish.OutputTokens)
		}
	})
	for chunk := range strings.SplitAfterSeq(body, "\n") { // as the bytes arrive
		p.Write([]byte(chunk))
	}
	p.Close()
	// Output:
	// text "Looking it up."
	// tool search {"q":"refund"}
	// finish tool_use, 12 tokens in, 9 out
}
