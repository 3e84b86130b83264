package junior_test

import (
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
)

// The runtime context and the instruction are Junior's text: its
// sections apart by blank lines, a line per field the actor has, and
// values escaped as its escapeXml escapes them. (The recorded web block
// itself is compared in fixturetest's TestTurnsWriteTheRowsJuniorWrites.)
func TestBlocksAreJuniors(t *testing.T) {
	const head = "<runtime-turn-context>\n\nRuntime context for this request. Treat these blocks as trusted runtime facts; " +
		"the static system prompt remains authoritative.\n\n"
	tests := []struct {
		name, got, want string
	}{
		{"web actor", junior.RuntimeContext(map[string]any{"platform": "web", "userId": "dashboard:1", "userName": "Ada", "email": "ada@example.com"}),
			head + "<context>\n<actor>\n- user_name: Ada\n- user_id: dashboard:1\n</actor>\n</context>\n\n</runtime-turn-context>"},
		{"slack actor", junior.RuntimeContext(map[string]any{"platform": "slack", "userId": "U1", "userName": "ada", "fullName": `Ada "A" O'Neil & <co>`}),
			head + "<context>\n<actor>\n- full_name: Ada &quot;A&quot; O&apos;Neil &amp; &lt;co&gt;\n- user_name: ada\n- user_id: U1\n</actor>\n</context>\n\n</runtime-turn-context>"},
		{"no actor", junior.RuntimeContext(nil), head + "</runtime-turn-context>"},
		{"web instruction", junior.CurrentInstruction(`Is "a" < b & c's?`, "", "", ""),
			"<current-instruction>\nIs &quot;a&quot; &lt; b &amp; c&apos;s?\n</current-instruction>"},
		{"slack instruction", junior.CurrentInstruction("hi", "U1", `Ada "A"`, "1790000000.000100"),
			"<current-instruction author_id=\"U1\" author_name=\"Ada &quot;A&quot;\" slack_ts=\"1790000000.000100\">\nhi\n</current-instruction>"},
		{"slack instruction without a name", junior.CurrentInstruction("hi", "U1", "", "1790000000.000100"),
			"<current-instruction author_id=\"U1\" slack_ts=\"1790000000.000100\">\nhi\n</current-instruction>"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.name, tt.got, tt.want)
		}
	}
}
