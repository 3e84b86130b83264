package app_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// stopAt is a progress handler that says "stop" in the thread, once, at
// the first step of the agent when says so.
func stopAt(when func(fixture.Progress) bool) fixture.CallOption {
	var once sync.Once
	return fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		if when(p) {
			once.Do(func() { a.Send(fixture.SlackThreadMessage("stop")) })
		}
		return nil
	})
}

// A stop while the model's answer is on its way cancels the running
// turn: the agent says so in the thread, and the mention and the stop
// are both handled.
func TestStopCancelsTheRunningTurn(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Status check"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage})))
	conv := f.Run(fixture.SlackMention("check the status page"), stopAt(func(p fixture.Progress) bool { return p.Type == "tool_request" }))
	if got := turns(conv); !slices.Equal(got, []string{"succeeded:cancelled"}) {
		t.Fatalf("turns %v", got)
	}
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["text"] != "OK, I'll stay out of this thread." || posts[0].Params["thread_ts"] != thread(conv) {
		t.Fatalf("posts %+v", posts)
	}
	conn := db(t, f)
	inputs := column[string](t, conn, `SELECT payload->>'messageId' FROM junior_conversation_events WHERE conversation_id = $1
		AND type = 'message' AND payload->>'role' = 'user' ORDER BY seq`, conv.ID)
	handled := column[string](t, conn, `SELECT payload->>'messageId' FROM junior_conversation_events WHERE conversation_id = $1
		AND type = 'message_handled' AND payload->>'messageId' = ANY($2) ORDER BY seq`, conv.ID, inputs)
	if len(inputs) != 2 || len(handled) != 2 {
		t.Fatalf("of the inputs %q, %q are handled", inputs, handled)
	}
}

// A stop while the router is asked cancels the turn, as one during the
// agent loop does: it is not a provider failure.
func TestStopDuringTheRouterCall(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(titler, fakeai.Text("Status"))
	m.Respond(router, routed())
	conv := f.Run(fixture.SlackMention("status?"),
		stopAt(func(p fixture.Progress) bool { return p.Type == "model_request" && p.Purpose == "structured" }))
	if got := turns(conv); !slices.Equal(got, []string{"succeeded:cancelled"}) {
		t.Fatalf("turns %v", got)
	}
	if r := conv.ReplyTexts(); !slices.Equal(r, []string{"OK, I'll stay out of this thread."}) {
		t.Fatalf("replies %q", r)
	}
	m.DropUnused() // the router's answer never reached the agent
}

// A stop while a tool runs leaves no tool call unanswered: the next turn's
// request is one the provider takes (fakeai refuses a tool_use with no
// tool_result, as Anthropic does).
func TestStopDuringAToolThenGoOn(t *testing.T) {
	f, web := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Status"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": slowPage})),
		fakeai.Text("Here is the status."))
	// The stop goes out while the page is being fetched: the handler
	// keeps the call's actions for the page to use.
	actions := make(chan fixture.Actions, 1)
	web.onSlow(func(*http.Request) {
		(<-actions).Send(fixture.SlackThreadMessage("stop"))
	})
	conv := f.Run(fixture.SlackMention("check the slow page"), fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		if p.Type == "tool_request" {
			actions <- a
		}
		return nil
	}))
	if got := turns(conv); !slices.Equal(got, []string{"succeeded:cancelled"}) {
		t.Fatalf("turns %v", got)
	}
	if len(conv.ToolCalls) != 1 || conv.ToolCalls[0].Status != "error" {
		t.Fatalf("the stopped tool call: %+v", conv.ToolCalls)
	}
	next := conv.Continue(fixture.SlackThreadMessage("try again, without the slow page"))
	if got := turns(next); !slices.Equal(got, []string{"succeeded"}) {
		t.Fatalf("the next turn: %v", got)
	}
	calls := m.Calls(agent)
	if len(calls) != 2 || len(calls[1].Prompt.Results) != 1 || !calls[1].Prompt.Results[0].IsError {
		t.Fatalf("the next turn's request: %+v", calls)
	}
}
