package judge_test

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/judge"
)

func TestParse(t *testing.T) {
	tests := []struct {
		text  string
		score float64
		err   string
	}{
		{`{"answer":"A","rationale":"names the date and the owner"}`, 1, ""},
		{` {"answer":"B","rationale":"close"} `, 0.75, ""},
		{`{"answer":"C","rationale":"r"}`, 0.5, ""},
		{`{"answer":"D","rationale":"r"}`, 0.25, ""},
		{`{"answer":"E","rationale":"made up a date"}`, 0, ""},
		{`{"answer":"F","rationale":"r"}`, 0, `answer "F" is not one of A, B, C, D, E`},
		{`{"answer":"a","rationale":"r"}`, 0, `answer "a"`},
		{`{"answer":"A"}`, 0, "no rationale"},
		{`{"answer":"A","rationale":"r","verdict":"pass"}`, 0, "not {\"answer\", \"rationale\"} JSON"},
		{`{"answer":"A","rationale":"r"} and more`, 0, "text after the JSON answer"},
		{`Answer: A`, 0, "not {\"answer\", \"rationale\"} JSON"},
		{``, 0, "not {\"answer\", \"rationale\"} JSON"},
	}
	for _, tt := range tests {
		v, err := judge.Parse(tt.text)
		switch {
		case tt.err == "" && (err != nil || v.Score != tt.score):
			t.Errorf("Parse(%q) = %+v, %v; want score %v", tt.text, v, err, tt.score)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Parse(%q) error %v; want it to say %s", tt.text, err, tt.err)
		}
	}
}

func TestPromptCarriesTheCriteriaAndBothConversations(t *testing.T) {
	p := judge.Prompt(judge.Rubric{Pass: []string{"names March 12"}, Fail: []string{"invents an owner"}},
		judge.Case{Earlier: "user: plan the launch", Transcript: "assistant: March 12, Priya"})
	for _, want := range []string{"<earlier_conversation>\nuser: plan the launch\n</earlier_conversation>",
		"<transcript>\nassistant: March 12, Priya\n</transcript>", "- Pass: names March 12", "- Fail: invents an owner"} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
}
