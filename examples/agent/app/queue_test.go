package app_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

type queue struct {
	Held  bool
	Items []struct {
		ConversationID, Kind, TurnID string
		MessageIDs                   []string
	}
}

// kinds are the kinds of the queue's items, sorted.
func (q queue) kinds() []string {
	out := []string{}
	for _, it := range q.Items {
		out = append(out, it.Kind)
	}
	slices.Sort(out)
	return out
}

// A turn past its slice pauses and waits in the queue; a message sent
// meanwhile is the next turn's input, not the paused one's.
func TestAPausedTurnWaitsInTheQueue(t *testing.T) {
	f, _ := newAgent(t, map[string]string{"AGENT_TURN_SLICE": "1ns"})
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Deploy check"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage})).
		Then(fakeai.Text("Deploy 42 is out.")), fakeai.Text("The EU region too."))
	var (
		q      queue
		paused []string // the lifecycle while the turn is paused
		err    error
	)
	conv := f.Run(fixture.WebMessage("Is deploy 42 out?"), fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		if p.Type != "paused" || paused != nil {
			return nil
		}
		a.Send(fixture.WebMessage("And the EU region?"))
		if _, err = send(f, "GET", "/api/internal/queue", admin(), nil, &q); err != nil {
			return err
		}
		var r struct {
			ConversationID string
			Events         []struct{ Data map[string]any }
		}
		if _, err = send(f, "GET", "/api/conversations/"+q.Items[0].ConversationID, admin(), nil, &r); err != nil {
			return err
		}
		paused = []string{}
		for _, e := range r.Events {
			if e.Data["type"] == "turn_lifecycle" {
				paused = append(paused, fmt.Sprint(e.Data["state"]))
			}
		}
		return nil
	}))
	if !slices.Equal(q.kinds(), []string{"input", "paused"}) {
		t.Fatalf("the queue while the turn was paused: %+v", q)
	}
	if !slices.Equal(paused, []string{"started"}) {
		t.Fatalf("the lifecycle while the turn was paused: %v", paused)
	}
	if got := turns(conv); !slices.Equal(got, []string{"succeeded", "succeeded"}) {
		t.Fatalf("turns %v", got)
	}
	if r := conv.ReplyTexts(); !slices.Equal(r, []string{"Deploy 42 is out.", "The EU region too."}) {
		t.Fatalf("replies %q", r)
	}
	conn := db(t, f)
	second := one[string](t, conn, `SELECT payload->>'messageId' FROM junior_conversation_events WHERE conversation_id = $1
		AND type = 'message' AND payload->>'text' = 'And the EU region?'`, conv.ID)
	if inputs := one[string](t, conn, `SELECT payload->>'inputMessageIds' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started' ORDER BY seq DESC LIMIT 1`, conv.ID); inputs != `["`+second+`"]` {
		t.Fatalf("the second turn's inputs %s; want the message sent while the first was paused, %s", inputs, second)
	}
}

func TestAToolBehindAuthorizationWaitsForTheCallback(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Billing issues"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
		Then(fakeai.Text("Issue 7 has the rollback plan.")))
	conv := f.Run(fixture.WebMessage("Which issue has the billing rollback plan?"))
	if got := turns(conv); !slices.Equal(got, []string{"started"}) {
		t.Fatalf("turns while waiting %v", got)
	}
	var pending struct {
		Authorization struct{ AuthorizationURL string }
	}
	call(t, f, "GET", "/api/conversations/"+conv.ID+"/pending-messages", as(fixture.AuthorEmail), nil, &pending)
	link, err := url.Parse(pending.Authorization.AuthorizationURL)
	if err != nil || link.Host != "github.com" || link.Query().Get("state") == "" {
		t.Fatalf("authorization link %q", pending.Authorization.AuthorizationURL)
	}
	if code := call(t, f, "GET", "/api/oauth/callback/github?state=authz_wrong&code=x", nil, nil, nil); code != 404 {
		t.Fatalf("a callback for no turn: %d", code)
	}
	done := conv.Continue(fixture.CompleteAuth("github"))
	if got := turns(done); !slices.Equal(got, []string{"succeeded"}) {
		t.Fatalf("turns %v", got)
	}
	if r := done.ReplyTexts(); !slices.Equal(r, []string{"Issue 7 has the rollback plan."}) {
		t.Fatalf("replies %q", r)
	}
	calls := m.Calls(agent)
	if len(calls) != 2 || !strings.Contains(calls[1].Prompt.Results[0].Content, "Billing migration rollback plan") {
		t.Fatalf("the tool's result after the callback: %+v", calls)
	}
	types := column[string](t, db(t, f), `SELECT type FROM junior_conversation_events WHERE conversation_id = $1
		AND type LIKE 'authorization_%' ORDER BY seq`, conv.ID)
	if !slices.Equal(types, []string{"authorization_requested", "authorization_completed"}) {
		t.Fatalf("authorization rows %v", types)
	}
}

// A turn that waits for an authorization keeps its conversation: the
// next message waits behind it, and of callbacks that race one wins.
func TestMessagesWaitBehindAnAuthorization(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Billing issues"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
		Then(fakeai.Text("Issue 7.")), fakeai.Text("Nothing else is open."))
	conv := f.Run(fixture.WebMessage("Which issue has the rollback plan?"))
	if next := conv.Continue(fixture.WebMessage("Anything else open?")); len(next.Turns) != 0 {
		t.Fatalf("a message behind an authorization ran: %v", turns(next))
	}
	var q queue
	if call(t, f, "GET", "/api/internal/queue", admin(), nil, &q); !slices.Equal(q.kinds(), []string{"awaiting_authorization", "waiting"}) {
		t.Fatalf("queue %v", q.kinds())
	}
	var pending struct {
		Authorization struct{ AuthorizationURL string }
	}
	call(t, f, "GET", "/api/conversations/"+conv.ID+"/pending-messages", as(fixture.AuthorEmail), nil, &pending)
	link, _ := url.Parse(pending.Authorization.AuthorizationURL)
	state := link.Query().Get("state")
	// Callbacks that race: one wins.
	var wg sync.WaitGroup
	codes := make([]int, 6)
	for i := range codes {
		wg.Go(func() {
			codes[i], _ = send(f, "GET", "/api/oauth/callback/github?state="+state+"&code=gh-code-1", nil, nil, nil)
		})
	}
	wg.Wait()
	slices.Sort(codes)
	if !slices.Equal(codes, []int{200, 404, 404, 404, 404, 404}) {
		t.Fatalf("racing callbacks answered %v", codes)
	}
	waitIdle(t, f)
	if l := lifecycle(t, f, conv.ID); !slices.Equal(l, []string{"started", "succeeded", "started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	conn := db(t, f)
	completed := one[int](t, conn, `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'authorization_completed'`, conv.ID)
	result := one[int](t, conn, `SELECT seq FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'tool_result'`, conv.ID)
	secondStart := one[int](t, conn, `SELECT max(seq) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_started'`, conv.ID)
	if completed != 1 || result > secondStart {
		t.Fatalf("%d authorization_completed rows; the tool result at seq %d, the next turn at %d", completed, result, secondStart)
	}
}

func TestStopEndsATurnWaitingForAnAuthorization(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Billing issues"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})))
	conv := f.Run(fixture.SlackMention("which issue has the rollback plan?"))
	if e := f.Slack().Calls("chat.postEphemeral"); len(e) != 1 || !strings.Contains(e[0].Params["text"], "https://github.com/login/oauth/authorize") {
		t.Fatalf("the authorization link: %+v", e)
	}
	next := conv.Continue(fixture.SlackThreadMessage("stop"))
	if got := turns(next); !slices.Equal(got, []string{"succeeded:cancelled"}) || next.Turns[0].ID != conv.Turns[0].ID {
		t.Fatalf("turns %v; want the waiting turn %s cancelled", got, conv.Turns[0].ID)
	}
	var q queue
	if call(t, f, "GET", "/api/internal/queue", admin(), nil, &q); len(q.Items) != 0 {
		t.Fatalf("queue %v", q.kinds())
	}
}

func TestAHeartbeatRunsDueAutomations(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(agent, fakeai.Text("Daily digest: all green."))
	f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "daily", Task: "Post the daily digest."})
	channel := map[string]string{"platform": "slack", "teamId": fixture.TeamID, "channelId": fixture.Channel}
	ok := map[string]any{"id": "later", "destination": channel, "task": "Not yet.", "intervalSeconds": 86400, "nextRunAt": "2999-01-01T00:00:00Z"}
	if code := call(t, f, "POST", "/api/internal/automations", admin(), ok, nil); code != 201 {
		t.Fatalf("an automation due later: %d", code)
	}
	conv := f.Run(fixture.Heartbeat())
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["channel"] != fixture.Channel || posts[0].Params["thread_ts"] != "" || posts[0].Params["text"] != "Daily digest: all green." {
		t.Fatalf("posts %+v", posts)
	}
	if s := one[string](t, db(t, f), `SELECT payload->>'surface' FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_started'`,
		conv.ID); s != "scheduler" {
		t.Fatalf("surface %q", s)
	}
	// The next heartbeat finds nothing due.
	if code := call(t, f, "GET", "/api/internal/heartbeat", scheduler(), nil, nil); code != 202 {
		t.Fatalf("heartbeat: %d", code)
	}
	waitIdle(t, f)
	if n := len(f.Slack().Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d posts after the second heartbeat", n)
	}
	if code := call(t, f, "GET", "/api/internal/heartbeat", nil, nil, nil); code != 401 {
		t.Fatalf("a heartbeat without the secret: %d", code)
	}
}

func TestTheInternalRoutesRefuseBadInput(t *testing.T) {
	f, _ := newAgent(t, nil)
	channel := map[string]string{"platform": "slack", "teamId": fixture.TeamID, "channelId": fixture.Channel}
	for _, body := range []map[string]any{
		{},
		{"id": "a", "destination": channel, "task": "digest"},                             // no interval
		{"id": "a", "destination": channel, "task": "  ", "intervalSeconds": 60},          // blank task
		{"id": "", "destination": channel, "task": "digest", "intervalSeconds": 60},       // no id
		{"id": "a", "destination": channel, "task": "digest", "intervalSeconds": "daily"}, // not a number
		{"id": "a", "destination": channel, "task": "digest", "intervalSeconds": 999999999999},
		{"id": "a", "destination": channel, "task": "dig\x00est", "intervalSeconds": 60},
		{"id": "a", "channelId": fixture.Channel, "task": "digest", "intervalSeconds": 60}, // no destination
		{"id": "a", "destination": map[string]string{"platform": "web"}, "task": "digest", "intervalSeconds": 60},
		{"id": "a", "destination": map[string]string{"platform": "web", "email": "a@example.com", "channelId": "C1"}, "task": "digest", "intervalSeconds": 60},
		{"id": "a", "destination": map[string]string{"platform": "teams", "channelId": "C1"}, "task": "digest", "intervalSeconds": 60},
	} {
		if code := call(t, f, "POST", "/api/internal/automations", admin(), body, nil); code != 400 {
			t.Errorf("%v: %d; want 400", body, code)
		}
	}
	if code := call(t, f, "GET", "/api/internal/conversations?since=yesterday", admin(), nil, nil); code != 400 {
		t.Errorf("a bad since: %d; want 400", code)
	}
	if n := one[int](t, db(t, f), `SELECT count(*) FROM agent_automations`); n != 0 {
		t.Fatalf("%d automations written", n)
	}
	ok := map[string]any{"id": "daily", "destination": channel, "task": "digest", "intervalSeconds": 86400}
	if code := call(t, f, "POST", "/api/internal/automations", admin(), ok, nil); code != 201 {
		t.Fatalf("an automation: %d", code)
	}
	if code := call(t, f, "POST", "/api/internal/automations", admin(), ok, nil); code != 409 {
		t.Fatalf("the same id again: %d; want 409", code)
	}
}

// The routes a test drives the agent with are off unless the admin
// secret is set, and the heartbeat's secret does not open them.
func TestTheAdminRoutesNeedTheirOwnSecret(t *testing.T) {
	paths := []string{"/api/internal/idle", "/api/internal/queue", "/api/internal/conversations?since=2026-01-01T00:00:00Z"}
	off, _ := newAgent(t, map[string]string{"AGENT_ADMIN_SECRET": ""})
	on, _ := newAgent(t, nil)
	for _, p := range paths {
		if code := call(t, off, "GET", p, scheduler(), nil, nil); code != 404 {
			t.Errorf("%s with no admin secret set: %d; want 404", p, code)
		}
		if code := call(t, on, "GET", p, scheduler(), nil, nil); code != 401 {
			t.Errorf("%s with the scheduler's secret: %d; want 401", p, code)
		}
		if code := call(t, on, "GET", p, admin(), nil, nil); code != 200 {
			t.Errorf("%s with the admin secret: %d; want 200", p, code)
		}
	}
	// Reading a conversation: the scheduler's secret is not enough.
	m := on.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Hello"))
	m.Respond(agent, fakeai.Text("Hi."))
	report := "/api/conversations/" + url.PathEscape(on.Run(fixture.WebMessage("hello")).ID)
	if code := call(t, on, "GET", report, scheduler(), nil, nil); code != 401 {
		t.Errorf("a report with the scheduler's secret: %d; want 401", code)
	}
	if code := call(t, on, "GET", report, admin(), nil, nil); code != 200 {
		t.Errorf("a report with the admin secret: %d; want 200", code)
	}
	if code := call(t, on, "GET", "/api/conversations/%00", admin(), nil, nil); code != 404 {
		t.Errorf("a NUL id with the admin secret: %d; want 404", code)
	}
}

// Inputs sent while the queue is held meet in one turn: the fixture's
// Batch holds it through the queue routes, sends them, and lets it go.
func TestInputsSentWhileTheQueueIsHeldMeetInOneTurn(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Launch questions"))
	m.Respond(agent, fakeai.Text("March 12, and Priya owns it."))
	conv := f.Run(fixture.Batch(fixture.WebMessage("When is the launch?"), fixture.WebMessage("And who owns it?")))
	if got := turns(conv); !slices.Equal(got, []string{"succeeded"}) {
		t.Fatalf("turns %v", got)
	}
	if p := m.Calls(agent)[0].Prompt.Text(); !strings.Contains(p, "When is the launch?") || !strings.Contains(p, "And who owns it?") {
		t.Fatalf("the turn's instruction lacks an input: %s", p)
	}
	if n := one[int](t, db(t, f), `SELECT jsonb_array_length(payload->'inputMessageIds') FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started'`, conv.ID); n != 2 {
		t.Fatalf("the turn took %d inputs; want both", n)
	}
	var q queue
	if call(t, f, "GET", "/api/internal/queue", admin(), nil, &q); q.Held {
		t.Fatalf("the queue is still held: %+v", q)
	}
}
