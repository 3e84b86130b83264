package transcript_test

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/transcript"
)

func TestARecordingRendersItsMessagesToolsAndTurns(t *testing.T) {
	rec, err := history.ReadFile("../history/testdata/launch-planning.json")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := transcript.Write(&b, transcript.FromHistory("launch-planning.json", rec)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<!doctype html>", "Help me plan the Orbit launch", "<b>tool updatePlan</b> (completed)",
		`<pre class="result">Plan updated</pre>`, "**Orbit launch plan**", "turn turn_api-msg_0c3e1e9a4d97bb760f0656d0: succeeded (success)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// Whatever an agent or a person wrote is shown, never run.
func TestEveryTextIsEscaped(t *testing.T) {
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	p := transcript.Page{Title: evil, Conversations: []transcript.Conversation{{ID: evil, Parts: []transcript.Part{
		{Kind: "message", Role: "user", Text: evil},
		{Kind: "message", Role: `assistant" onclick="alert(3)`, Text: evil},
		{Kind: "tool", Name: evil, Args: evil, Result: evil, Status: evil},
		{Kind: "score", Name: evil, Status: evil, Text: evil},
	}}}}
	var b strings.Builder
	if err := transcript.Write(&b, p); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>alert", "<img", `onclick="alert`} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
}
