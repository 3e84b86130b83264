package fixturetest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/history"
)

const launchPlanning = "../../../history/testdata/launch-planning.json"

// Fork takes the reply items the test loaded: a recording's reply named
// by its text, and a built item after the recording; a fork at each holds
// the rows up to that reply. An item not loaded into the conversation, an
// ambiguous one, or an input fails at once, saying which.
func TestForkAtLoadedReplyItems(t *testing.T) {
	rec := &expectTB{TB: t}
	f := fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed(), routed(), routed())
	m.Respond(loop, fakeai.Text("Nothing else."), fakeai.Text("Then ship."), fakeai.Text("March 10."), fakeai.Text("March 9."))
	moved := history.Reply("Moved the review to March 9.")
	recorded := f.Run(fixture.WebMessage("Anything else?"), fixture.History(fixture.Recorded(launchPlanning),
		fixture.Built(history.WebMessage("Move the review to March 9."), moved)))
	ok, planned := history.Reply("OK."), history.Reply("Plan: ship on March 12.")
	built := f.Run(fixture.WebMessage("And then?"), fixture.History(fixture.Built(
		history.WebMessage("a"), ok, history.WebMessage("b"), ok, history.WebMessage("Plan it."), planned)))

	refusals := []struct {
		name string
		conv *fixture.Conversation
		at   fixture.ForkPoint
		want string
	}{
		{"a built item of another conversation", recorded, planned, `history.Reply("Plan: ship on March 12."): that item was not loaded into this conversation`},
		{"a built item loaded twice", built, ok, `history.Reply("OK."): that item was loaded 2 times into this conversation`},
		{"an input", built, history.WebMessage("a"), `history.WebMessage("a"): that is an input`},
		{"a recorded reply without a recording", built, fixture.RecordedReply{Position: 1}, "no recording with replies was loaded into this conversation"},
		{"a position past the recording's replies", recorded, fixture.RecordedReply{Position: 4}, "launch-planning.json has 3 replies"},
		{"text two replies hold", recorded, fixture.RecordedReply{Containing: "Priya"}, `replies [1 3] of the recording ../../../history/testdata/launch-planning.json all contain "Priya"`},
		{"text no reply holds", recorded, fixture.RecordedReply{Containing: "Atlas"}, "no reply of the recording"},
		{"a position and text that disagree", recorded, fixture.RecordedReply{Position: 2, Containing: "Priya"}, "no reply of the recording"},
		{"no reply named", recorded, fixture.RecordedReply{}, "a RecordedReply that names no reply: set Position (1 to 3) or Containing"},
		{"a Reply without its id", recorded, fixture.Reply{Text: "Nothing else."}, "a Reply without a MessageID"},
		{"nil", recorded, nil, "at nil"},
	}
	for _, r := range refusals {
		if msg, _ := rec.expect(t, "Fork at "+r.name, func() { r.conv.Fork(r.at) }); !strings.Contains(msg, r.want) {
			t.Errorf("Fork at %s failed with %q; want %q", r.name, msg, r.want)
		}
	}

	// The recording's second reply, by its text: the fork ends there.
	if got := recorded.Fork(fixture.RecordedReply{Containing: "Go/no-go"}).Continue(fixture.WebMessage("When is the go/no-go?")); !slices.Equal(got.ReplyTexts(), []string{"March 10."}) {
		t.Fatalf("the fork at the recording's second reply: %+v", got)
	}
	if p := m.Calls(loop)[2].Prompt.Text(); !strings.Contains(p, "**Go/no-go:** March 10") ||
		strings.Contains(p, "What are the three most important things") || strings.Contains(p, "Move the review") {
		t.Fatalf("the prompt of the fork at the recording's second reply: %s", p)
	}
	// The built reply after the recording: the fork holds all of the
	// recording, and the built turn, not the call after it.
	if got := recorded.Fork(moved).Continue(fixture.WebMessage("When is the review?")); !slices.Equal(got.ReplyTexts(), []string{"March 9."}) {
		t.Fatalf("the fork at the built reply: %+v", got)
	}
	if p := m.Calls(loop)[3].Prompt.Text(); !strings.Contains(p, "What are the three most important things") ||
		!strings.Contains(p, "Moved the review to March 9.") || strings.Contains(p, "Anything else?") {
		t.Fatalf("the prompt of the fork at the built reply: %s", p)
	}
}
