package fixturetest_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// The reference agent runs as a process too: its binary,
// configured only by its environment (DATABASE_URL, the proxy's
// HTTPS_PROXY and SSL_CERT_FILE, its secrets, and the address).
func TestTheAgentRunsAsAProcess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/examples/agent").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/agent: %v\n%s", err, out)
	}
	app := exampleAgent(nil)
	app.Handler, app.Command, app.AddrEnv = nil, []string{bin}, "AGENT_ADDR"
	f := fixture.New(t, app, fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Thread question"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("It is about the launch.")))
	conv := f.Run(fixture.SlackMention("what is in this thread?"))
	if !slices.Equal(conv.ReplyTexts(), []string{"It is about the launch."}) || conv.ToolCalls[0].Status != "completed" {
		t.Fatalf("call %+v", conv)
	}
}

// f.Agent starts another instance with other limits, on the same
// database and proxy: the same loaded history compacts under its small
// context window and not under the first instance's.
func TestAnotherInstanceWithOtherLimits(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	small := f.Agent(fixture.AgentOptions{Limits: fixture.Limits{ContextWindowTokens: 500}})
	m := f.Model()
	summarizer := fakeai.Agent{Name: "summary", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Summarize the conversation") }}
	m.Respond(router, routed(), routed())
	m.Respond(summarizer, fakeai.Text("Orbit ships March 12; Priya owns it."))
	m.Respond(loop, fakeai.Text("Priya."), fakeai.Text("Priya, still."))
	history := fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json"))
	wide := f.Run(fixture.WebMessage("Who owns Orbit?"), history)
	narrow := small.Run(fixture.WebMessage("Who owns Orbit?"), history)
	if wide.ID == narrow.ID || wide.Turns[0].Status != "succeeded" || narrow.Turns[0].Status != "succeeded" {
		t.Fatalf("calls %+v / %+v", wide, narrow)
	}
	calls := m.Calls(loop)
	if strings.Contains(calls[0].Prompt.Text(), "<conversation-summary>") || !strings.Contains(calls[1].Prompt.Text(), "<conversation-summary>") {
		t.Fatalf("only the small window's prompt is compacted:\n%s\n---\n%s", calls[0].Prompt.Text(), calls[1].Prompt.Text())
	}
}
