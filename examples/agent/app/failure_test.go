package app_test

import (
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// A row the turn cannot store fails the turn: it ends failed with
// persistence_failed, and the user sees, in the thread, that the agent
// could not finish. The database refuses the row for real: a constraint
// on the event log rejects one type of row.
func TestAFailedAppendFailsTheTurn(t *testing.T) {
	const failure = "Sorry, I couldn't finish that: I could not save this conversation. Please try again."
	tests := []struct {
		name    string
		refused string            // the type of row the database refuses
		answers []fakeai.Response // the agent loop's
		posts   []string          // what the thread shows
	}{
		{"a tool's result", "tool_result",
			[]fakeai.Response{fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage}))},
			[]string{failure}},
		// The reply went out before its rows were refused; the failure
		// follows it, as the turn's end.
		{"the turn's end", "turn_completed",
			[]fakeai.Response{fakeai.Text("Deploy 42 went out.")},
			[]string{"Deploy 42 went out.", failure}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newAgent(t, nil)
			m := f.Model()
			m.Respond(router, routed())
			m.Respond(titler, fakeai.Text("Deploy check"))
			m.Respond(agent, tt.answers...)
			if _, err := db(t, f).Exec(t.Context(), `ALTER TABLE junior_conversation_events
				ADD CONSTRAINT refuse_one_type CHECK (type <> '`+tt.refused+`') NOT VALID`); err != nil {
				t.Fatal(err)
			}
			conv := f.Run(fixture.SlackMention("did deploy 42 go out?"))
			if got := turns(conv); !slices.Equal(got, []string{"failed:persistence_failed"}) {
				t.Fatalf("turns %v", got)
			}
			if r := conv.ReplyTexts(); !slices.Equal(r, []string{failure}) {
				t.Fatalf("stored replies %q", r)
			}
			var posts []string
			for _, p := range f.Slack().Calls("chat.postMessage") {
				posts = append(posts, p.Params["text"])
			}
			if !slices.Equal(posts, tt.posts) {
				t.Fatalf("the thread shows %q; want %q", posts, tt.posts)
			}
			if n := len(m.Calls(agent)); n != len(tt.answers) {
				t.Fatalf("the agent loop called the model %d times; a turn that cannot store its rows must not go on", n)
			}
		})
	}
}
