package app_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// mention posts a channel mention, seeded in the mock as Slack has it.
func (w *world) mention(ts, text string) {
	w.t.Helper()
	w.slack.AddMessage("CEVAL1", slack.Message{TS: ts, User: "U0PERSON1", Text: "<@UBOT> " + text})
	if code := w.slackEvent(map[string]any{"type": "app_mention", "user": "U0PERSON1", "text": "<@UBOT> " + text, "channel": "CEVAL1", "ts": ts}); code != 200 {
		w.t.Fatalf("mention %s: %d", ts, code)
	}
}

func (w *world) threadMessage(thread, ts, text string) {
	w.t.Helper()
	w.slack.AddMessage("CEVAL1", slack.Message{TS: ts, ThreadTS: thread, User: "U0PERSON1", Text: text})
	w.slackEvent(map[string]any{"type": "message", "channel_type": "channel", "user": "U0PERSON1", "text": text, "channel": "CEVAL1", "ts": ts, "thread_ts": thread})
}

// A stop while the router is asked cancels the turn, as one during the
// agent loop does: it is not a provider failure.
func TestStopDuringTheRouterCall(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(titler, fakeai.Text("Status"))
	// Only the router's request is held; the title's goes on.
	held, _ := w.hold(proxy.EventModelRequest, func(ev proxy.Event) bool { return ev.Purpose == "structured" })
	w.model.Respond(router, routed())
	ts := "1790000001.000100"
	w.mention(ts, "status?")
	receive(t, held)
	w.threadMessage(ts, "1790000001.000200", "stop")
	w.idle()
	events := w.report("slack:CEVAL1:" + ts)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded:cancelled"}) {
		t.Fatalf("lifecycle %v", l)
	}
	if r := replies(events); !slices.Equal(r, []string{"OK, I'll stay out of this thread."}) {
		t.Fatalf("replies %q", r)
	}
	w.model.DropUnused() // the router's answer never reached the agent
}

// A stop while a tool runs leaves no tool call unanswered: the next turn's
// request is one the provider takes (fakeai refuses a tool_use with no
// tool_result, as Anthropic does).
func TestStopDuringAToolThenGoOn(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed(), routed())
	w.model.Respond(titler, fakeai.Text("Status"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/slow"})),
		fakeai.Text("Here is the status."))
	ts := "1790000002.000100"
	w.mention(ts, "check the slow page")
	<-w.slow // the tool is running
	w.threadMessage(ts, "1790000002.000200", "stop")
	w.idle()
	w.threadMessage(ts, "1790000002.000300", "try again, without the slow page")
	w.idle()
	events := w.report("slack:CEVAL1:" + ts)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded:cancelled", "started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	calls := w.model.Calls(agent)
	if len(calls) != 2 || len(calls[1].Prompt.Results) != 1 || !calls[1].Prompt.Results[0].IsError {
		t.Fatalf("the next turn's request: %+v", calls)
	}
	for _, e := range events {
		if e.Data["type"] == "tool_calls" {
			if c := e.Data["calls"].([]any)[0].(map[string]any); c["status"] != "error" {
				t.Fatalf("the stopped tool call is %v", c["status"])
			}
		}
	}
}

// A turn that waits for an authorization keeps its conversation: the
// next message waits behind it, and a stop ends it.
func TestMessagesWaitBehindAnAuthorization(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed(), routed())
	w.model.Respond(titler, fakeai.Text("Billing issues"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
		Then(fakeai.Text("Issue 7.")), fakeai.Text("Nothing else is open."))
	got := w.webTurn("k1", "Which issue has the rollback plan?")
	second := w.follow(got.ConversationID, "k2", "Anything else open?")
	var q struct {
		Items []struct{ Kind string }
	}
	w.do("GET", "/api/internal/queue", "", nil, &q)
	kinds := []string{}
	for _, it := range q.Items {
		kinds = append(kinds, it.Kind)
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{"awaiting_authorization", "waiting"}) {
		t.Fatalf("queue %v", kinds)
	}
	w.idle()
	var pending struct {
		Authorization struct{ AuthorizationURL string }
	}
	w.do("GET", "/api/conversations/"+got.ConversationID+"/pending-messages", userEmail, nil, &pending)
	link, _ := url.Parse(pending.Authorization.AuthorizationURL)
	state := link.Query().Get("state")
	// Callbacks that race: one wins.
	var wg sync.WaitGroup
	codes := make([]int, 6)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(w.url + "/api/oauth/callback/github?state=" + state + "&code=gh-code-1")
			if err == nil {
				resp.Body.Close()
				codes[i] = resp.StatusCode
			}
		}()
	}
	wg.Wait()
	slices.Sort(codes)
	if !slices.Equal(codes, []int{200, 404, 404, 404, 404, 404}) {
		t.Fatalf("racing callbacks answered %v", codes)
	}
	w.idle()
	events := w.report(got.ConversationID)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded", "started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	conn := pgtest.Connect(t, w.db)
	var completed, resultSeq, secondStart int
	conn.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'authorization_completed'`,
		got.ConversationID).Scan(&completed)
	conn.QueryRow(context.Background(), `SELECT seq FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'tool_result'`,
		got.ConversationID).Scan(&resultSeq)
	conn.QueryRow(context.Background(), `SELECT seq FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_started'
		AND payload->'inputMessageIds'->>0 = $2`, got.ConversationID, second.MessageID).Scan(&secondStart)
	if completed != 1 || resultSeq > secondStart {
		t.Fatalf("%d authorization_completed rows; the tool result at seq %d, the next turn at %d", completed, resultSeq, secondStart)
	}
}

func TestStopEndsATurnWaitingForAnAuthorization(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Billing issues"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})))
	ts := "1790000003.000100"
	w.mention(ts, "which issue has the rollback plan?")
	w.idle()
	if e := w.slack.Calls("chat.postEphemeral"); len(e) != 1 || !strings.Contains(e[0].Params["text"], "https://github.com/login/oauth/authorize") {
		t.Fatalf("the authorization link: %+v", e)
	}
	w.threadMessage(ts, "1790000003.000200", "stop")
	w.idle()
	events := w.report("slack:CEVAL1:" + ts)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded:cancelled"}) {
		t.Fatalf("lifecycle %v", l)
	}
	var q struct{ Items []any }
	if w.do("GET", "/api/internal/queue", "", nil, &q); len(q.Items) != 0 {
		t.Fatalf("queue %v", q.Items)
	}
}

func TestBadWebInputWritesNothing(t *testing.T) {
	w := newWorld(t, nil)
	for _, body := range []map[string]string{
		{"idempotencyKey": "k1", "message": "hi\x00there"},
		{"idempotencyKey": "k\x00", "message": "hi"},
		{"idempotencyKey": "", "message": "hi"},
		{"idempotencyKey": "k2", "message": "   "},
	} {
		if code := w.do("POST", "/api/conversations", userEmail, body, nil); code != 400 {
			t.Errorf("%q: %d; want 400", body, code)
		}
	}
	var n int
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT count(*) FROM junior_conversations`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d conversations written", n)
	}
	if code := w.do("GET", "/api/conversations/%00", userEmail, nil, nil); code != 404 {
		t.Fatalf("a NUL id: %d; want 404", code)
	}
}
