package transcript_test

import (
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/transcript"
)

// A page a person opens: what was said, the tool call and the turn's
// end. Everything an agent or a person wrote is escaped.
func ExampleWrite() {
	page := transcript.Page{Title: "refund window", Conversations: []transcript.Conversation{{
		ID: "local:web:4f1c",
		Parts: []transcript.Part{
			{Kind: "message", Role: "user", Text: "How long is the refund window? <script>alert(1)</script>"},
			{Kind: "tool", Name: "search", Args: `{"q":"refund"}`, Result: "30 days", Status: "ok"},
			{Kind: "message", Role: "assistant", Text: "30 days."},
			{Kind: "turn", Status: "turn_completed"},
		},
	}}}
	var b strings.Builder
	if err := transcript.Write(&b, page); err != nil {
		panic(err)
	}
	html := b.String()
	fmt.Println("escaped:", !strings.Contains(html, "<script>alert(1)"), "has the reply:", strings.Contains(html, "30 days."))
	// Output:
	// escaped: true has the reply: true
}
