package fixturetest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// issue is a GitHub issues webhook's payload, as GitHub sends it (the
// parts the agent reads).
func issue(action string, number int, title string) map[string]any {
	state := "open"
	if action == "closed" {
		state = "closed"
	}
	return map[string]any{"action": action,
		"issue":      map[string]any{"number": number, "title": title, "state": state, "html_url": fmt.Sprintf("https://github.com/acme/app/issues/%d", number)},
		"repository": map[string]any{"full_name": "acme/app"}, "sender": map[string]any{"login": "octocat"}}
}

// The contract's event automation: a GitHub webhook runs the automation
// it matches, and Run returns the Conversation that started, whose
// reply went to the automation's channel.
func TestAGitHubWebhookRunsTheEventAutomation(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("Triaged: a crash on login, likely the auth service."))
	f.InsertEventAutomation("triage", "Triage the new issue.", fixture.EventFilter{Source: "github", Type: "issues.opened"})
	conv := f.Run(fixture.GitHubWebhook("issues", issue("opened", 12, "Crash on login")))
	if !slices.Equal(conv.ReplyTexts(), []string{"Triaged: a crash on login, likely the auth service."}) || len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" {
		t.Fatalf("call %+v", conv)
	}
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["channel"] != fixture.Channel {
		t.Fatalf("posts %+v", posts)
	}
	prompt := m.Calls(loop)[0].Prompt.Text()
	for _, want := range []string{"Triage the new issue.", "github event issues.opened on github:acme/app#12", "Title: Crash on login", "By: octocat"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q: %s", want, prompt)
		}
	}
}

// Another source's event goes through the ingest route, and an
// automation on a type takes the types within it.
func TestAnEventRunsTheEventAutomation(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("Deploy 43 finished; nothing to do."))
	f.InsertEventAutomation("deploys", "Say how the deploy went.", fixture.EventFilter{Source: "ci", Type: "deploy"})
	conv := f.Run(fixture.Event("ci", "deploy.finished", "ci:acme/app", map[string]any{"deploy": 43, "status": "green"}))
	if !slices.Equal(conv.ReplyTexts(), []string{"Deploy 43 finished; nothing to do."}) {
		t.Fatalf("call %+v", conv)
	}
	// The payload is in the current-instruction block, XML-escaped as
	// Junior escapes it.
	if p := m.Calls(loop)[0].Prompt.Text(); !strings.Contains(p, "ci event deploy.finished on ci:acme/app") ||
		!strings.Contains(p, `Payload: {&quot;deploy&quot;:43,&quot;status&quot;:&quot;green&quot;}`) {
		t.Fatalf("the prompt: %s", p)
	}
}

// Run of an event no automation takes fails, saying so, rather than
// return a Conversation that is not there.
func TestRunOfAnEventNoAutomationTakesFails(t *testing.T) {
	rec := &fatalTB{TB: t}
	f := fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel())
	f.InsertEventAutomation("triage", "Triage the new issue.", fixture.EventFilter{Source: "github", Type: "issues.opened"})
	msg := rec.fatal(t, 30*time.Second, "Run of an event nothing takes", func() {
		f.Run(fixture.GitHubWebhook("issues", issue("closed", 12, "Crash on login")))
	})
	if !strings.Contains(msg, "github issues started no conversation: no event automation matched it") {
		t.Fatalf("the failure says %q", msg)
	}
}

// A conversation that watches an issue is told of its events: the model
// sees the event and why the conversation watches it, and Continue
// returns what that did. An event on another issue tells it nothing.
func TestAWatchIsToldOfAGitHubWebhook(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Watching issue 12"))
	m.Respond(loop, fakeai.Text("I'll tell you when issue 12 closes."), fakeai.Text("Issue 12 is closed."))
	conv := f.Run(fixture.WebMessage("Tell me when acme/app#12 closes."))
	f.InsertWatch(conv, fixture.EventFilter{Source: "github", Type: "issues", Resource: "github:acme/app#12"}, "tell the user when it closes")

	other := conv.Continue(fixture.GitHubWebhook("issues", issue("closed", 13, "Typo in README")))
	if len(other.Turns) != 0 || len(other.Replies) != 0 {
		t.Fatalf("an event on another issue: %+v", other)
	}
	next := conv.Continue(fixture.GitHubWebhook("issues", issue("closed", 12, "Crash on login")))
	if next.ID != conv.ID || !slices.Equal(next.ReplyTexts(), []string{"Issue 12 is closed."}) || len(next.Turns) != 1 || next.Turns[0].Status != "succeeded" {
		t.Fatalf("the watch's call %+v", next)
	}
	prompt := m.Calls(loop)[1].Prompt.Text()
	for _, want := range []string{"github event issues.closed on github:acme/app#12", "Watched for: tell the user when it closes",
		"I'll tell you when issue 12 closes."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q: %s", want, prompt)
		}
	}
}

// The consecutive automated-turn limit holds with events counted: past
// the typed Limits.AutomatedTurns (AGENT_AUTOMATED_TURN_LIMIT), a watched
// event is stored and its turn refused (failed with automated_turn_limit,
// no model call, no reply); a person's message starts the count again.
// Were event dispatches not counted, the third event would run a turn
// the model has no script for.
func TestTheAutomatedTurnLimitCountsEvents(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Configure(fixture.AgentOptions{Limits: fixture.Limits{AutomatedTurns: 2}}))
	m := f.Model()
	m.Respond(router, routed(), routed(), routed(), routed(), routed())
	m.Respond(titler, fakeai.Text("Watching CI"))
	m.Respond(loop, fakeai.Text("Watching."), fakeai.Text("Build 1 failed."), fakeai.Text("Build 2 failed."),
		fakeai.Text("You're welcome."), fakeai.Text("Build 4 passed."))
	conv := f.Run(fixture.WebMessage("Watch the CI of acme/app for me."))
	f.InsertWatch(conv, fixture.EventFilter{Source: "ci", Resource: "ci:acme/app"}, "report each build")
	build := func(n int) fixture.Input {
		return fixture.Event("ci", "build.finished", "ci:acme/app", map[string]any{"build": n})
	}
	for n, want := range []string{"Build 1 failed.", "Build 2 failed."} {
		if c := conv.Continue(build(n + 1)); !slices.Equal(c.ReplyTexts(), []string{want}) || c.Turns[0].Status != "succeeded" {
			t.Fatalf("event %d: %+v", n+1, c)
		}
	}
	calls := len(m.Calls(loop))
	refused := conv.Continue(build(3))
	if len(refused.Turns) != 1 || refused.Turns[0].Status != "failed" || refused.Turns[0].Outcome != "automated_turn_limit" ||
		len(refused.Replies) != 0 || len(m.Calls(loop)) != calls {
		t.Fatalf("the third event in a row: %+v; model calls %d, were %d", refused, len(m.Calls(loop)), calls)
	}
	if !strings.Contains(refused.Transcript, "ci event build.finished on ci:acme/app") {
		t.Fatalf("the refused event is not in the conversation: %q", refused.Transcript)
	}
	if c := conv.Continue(fixture.WebMessage("Thanks!")); !slices.Equal(c.ReplyTexts(), []string{"You're welcome."}) {
		t.Fatalf("the person's message: %+v", c)
	}
	if c := conv.Continue(build(4)); !slices.Equal(c.ReplyTexts(), []string{"Build 4 passed."}) || c.Turns[0].Status != "succeeded" {
		t.Fatalf("an event after the person's message: %+v", c)
	}
}
