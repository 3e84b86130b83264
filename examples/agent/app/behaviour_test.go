package app_test

import (
	"context"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/proxy"
)

// webTurn starts a web conversation with message and waits for the
// agent to be idle.
func (w *world) webTurn(key, message string) accepted {
	w.t.Helper()
	var got accepted
	if code := w.do("POST", "/api/conversations", userEmail, map[string]string{"idempotencyKey": key, "message": message}, &got); code != 200 {
		w.t.Fatalf("POST /api/conversations: %d", code)
	}
	w.idle()
	return got
}

func (w *world) follow(id, key, message string) accepted {
	w.t.Helper()
	var got accepted
	if code := w.do("POST", "/api/conversations/"+id+"/messages", userEmail, map[string]string{"idempotencyKey": key, "message": message}, &got); code != 200 {
		w.t.Fatalf("POST messages: %d", code)
	}
	return got
}

// hold holds each event of type typ that match accepts at the proxy
// until the test releases it (or the agent gives up on the request);
// held is told of each.
func (w *world) hold(typ proxy.EventType, match func(proxy.Event) bool) (held <-chan proxy.Event, release func()) {
	h, r := make(chan proxy.Event, 4), make(chan struct{})
	stop := w.proxy.Subscribe(func(ctx context.Context, ev proxy.Event) {
		if ev.Type != typ || !match(ev) {
			return
		}
		h <- ev
		select {
		case <-r:
		case <-ctx.Done():
		}
	})
	var once sync.Once
	release = func() { once.Do(func() { close(r) }) }
	w.t.Cleanup(func() { release(); stop() })
	return h, release
}

func (w *world) holdToolRequests() (<-chan proxy.Event, func()) {
	return w.hold(proxy.EventToolRequest, func(proxy.Event) bool { return true })
}

func receive(t *testing.T, c <-chan proxy.Event) proxy.Event {
	t.Helper()
	select {
	case ev := <-c:
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("waited 30 s for a tool request at the proxy")
		return proxy.Event{}
	}
}

func TestAProviderErrorFailsTheTurnWithAReply(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("A question"))
	w.model.Respond(agent, fakeai.ProviderError(500))
	got := w.webTurn("k1", "Did deploy 42 go out?")
	events := w.report(got.ConversationID)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "failed"}) {
		t.Fatalf("lifecycle %v", l)
	}
	if r := replies(events); len(r) != 1 || !strings.Contains(r[0], "model provider failed") {
		t.Fatalf("replies %q", r)
	}
	var code string
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT payload->>'failureCode' FROM junior_conversation_events
		WHERE conversation_id = $1 AND idempotency_key LIKE 'turn:%:terminal'`, got.ConversationID).Scan(&code)
	if code != "model_execution_failed" {
		t.Fatalf("failureCode %q", code)
	}
}

func TestAForkCopiesTheRowsAndGoesOn(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed(), routed())
	w.model.Respond(titler, fakeai.Text("Launch plan"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/status"})).
		Then(fakeai.Text("Ship on March 12.")))
	src := w.webTurn("k1", "When do we ship?")
	turnID := "turn_" + strings.ReplaceAll(src.MessageID, ":", "_")
	reply := turnID + ":assistant:1"
	var fork struct{ ConversationID string }
	if code := w.do("POST", "/api/conversations/"+src.ConversationID+"/forks", userEmail,
		map[string]string{"idempotencyKey": "f1", "messageId": reply}, &fork); code != 200 || !strings.HasPrefix(fork.ConversationID, "local:web:") {
		t.Fatalf("fork: %d %+v", code, fork)
	}
	var again struct{ ConversationID string }
	w.do("POST", "/api/conversations/"+src.ConversationID+"/forks", userEmail, map[string]string{"idempotencyKey": "f1", "messageId": reply}, &again)
	if again != fork {
		t.Fatalf("a retried fork made %q, then %q", fork.ConversationID, again.ConversationID)
	}
	for _, bad := range []struct {
		user, messageID string
		want            int
	}{
		{userEmail, src.MessageID, 409}, // a user message is no cut point
		{userEmail, "turn_x:assistant:1", 409},
		{"someone@example.com", reply, 403},
	} {
		if code := w.do("POST", "/api/conversations/"+src.ConversationID+"/forks", bad.user,
			map[string]string{"idempotencyKey": "f2", "messageId": bad.messageID}, nil); code != bad.want {
			t.Errorf("fork at %s as %s: %d; want %d", bad.messageID, bad.user, code, bad.want)
		}
	}
	// Every row up to the reply, the same seq, key, type, payload and
	// time; then the fork note.
	conn := pgtest.Connect(t, w.db)
	var diff int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM (
			(SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $1
			 EXCEPT SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $2)
			UNION ALL
			(SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $2 AND idempotency_key IS DISTINCT FROM 'fork:note'
			 EXCEPT SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $1)
		) d`, src.ConversationID, fork.ConversationID).Scan(&diff); err != nil || diff != 0 {
		t.Fatalf("%d rows differ between the source and its fork (%v)", diff, err)
	}
	var title, from string
	conn.QueryRow(context.Background(), `SELECT title, forked_from_conversation_id FROM junior_conversations WHERE conversation_id = $1`, fork.ConversationID).Scan(&title, &from)
	if title != "Fork: Launch plan" || from != src.ConversationID {
		t.Fatalf("fork row: title %q, forked from %q", title, from)
	}
	// The fork goes on from the copied history.
	w.model.Respond(agent, fakeai.Text("Still March 12."))
	w.follow(fork.ConversationID, "k2", "And the owner?")
	w.idle()
	calls := w.model.Calls(agent)
	last := calls[len(calls)-1].Prompt.Text()
	if !strings.Contains(last, "When do we ship?") || !strings.Contains(last, "This Conversation is a fork") || !strings.Contains(last, "And the owner?") {
		t.Fatalf("the fork's prompt: %s", last)
	}
}

func TestAHeartbeatRunsDueAutomations(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(agent, fakeai.Text("Daily digest: all green."))
	conn := pgtest.Connect(t, w.db)
	if _, err := conn.Exec(context.Background(), `INSERT INTO agent_automations (id, team_id, channel_id, task, interval_seconds, next_run_at)
		VALUES ('daily', $1, 'CEVAL1', 'Post the daily digest.', 86400, now() - interval '1 minute'),
		       ('later', $1, 'CEVAL1', 'Not yet.', 86400, now() + interval '1 hour')`, teamID); err != nil {
		t.Fatal(err)
	}
	if code := w.do("GET", "/api/internal/heartbeat", "", nil, nil); code != 202 {
		t.Fatalf("heartbeat: %d", code)
	}
	w.idle()
	posts := w.slack.Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["channel"] != "CEVAL1" || posts[0].Params["thread_ts"] != "" || posts[0].Params["text"] != "Daily digest: all green." {
		t.Fatalf("posts %+v", posts)
	}
	var surface string
	conn.QueryRow(context.Background(), `SELECT payload->>'surface' FROM junior_conversation_events WHERE type = 'turn_started'`).Scan(&surface)
	if surface != "scheduler" {
		t.Fatalf("surface %q", surface)
	}
	// The next heartbeat finds nothing due.
	w.do("GET", "/api/internal/heartbeat", "", nil, nil)
	w.idle()
	if n := len(w.slack.Calls("chat.postMessage")); n != 1 {
		t.Fatalf("%d posts after the second heartbeat", n)
	}
	resp, err := http.Get(w.url + "/api/internal/heartbeat")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a heartbeat without the secret: %d", resp.StatusCode)
	}
}

func TestStopCancelsTheRunningTurn(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Status check"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/status"})))
	held, _ := w.holdToolRequests()
	ts := "1790000000.000200"
	w.mention(ts, "check the status page")
	receive(t, held) // the turn is running: its model answer is held
	stopTS := "1790000000.000300"
	w.threadMessage(ts, stopTS, "stop")
	w.idle()
	id := "slack:CEVAL1:" + ts
	events := w.report(id)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded:cancelled"}) {
		t.Fatalf("lifecycle %v", l)
	}
	posts := w.slack.Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["text"] != "OK, I'll stay out of this thread." || posts[0].Params["thread_ts"] != ts {
		t.Fatalf("posts %+v", posts)
	}
	var handled int
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1
		AND idempotency_key IN ($2, $3)`, id, "message:"+ts+":handled", "message:"+stopTS+":handled").Scan(&handled)
	if handled != 2 {
		t.Fatalf("%d of the mention and the stop are handled", handled)
	}
}

func TestAPausedTurnWaitsInTheQueue(t *testing.T) {
	w := newWorld(t, map[string]string{"AGENT_TURN_SLICE": "1ns"})
	w.model.Respond(router, routed(), routed())
	w.model.Respond(titler, fakeai.Text("Deploy check"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/status"})).
		Then(fakeai.Text("Deploy 42 is out.")), fakeai.Text("The EU region too."))
	held, release := w.holdToolRequests()
	var first accepted
	w.do("POST", "/api/conversations", userEmail, map[string]string{"idempotencyKey": "k1", "message": "Is deploy 42 out?"}, &first)
	receive(t, held)
	if code := w.do("POST", "/api/internal/queue/hold", "", nil, nil); code != 204 {
		t.Fatalf("hold: %d", code)
	}
	release()
	type queue struct {
		Held  bool
		Items []struct {
			ConversationID, Kind, TurnID string
			MessageIDs                   []string
		}
	}
	var q queue
	w.until("the turn to pause", func() bool {
		w.do("GET", "/api/internal/queue", "", nil, &q)
		return len(q.Items) == 1 && q.Items[0].Kind == "paused"
	})
	// While it waits, a message steers: it is the next turn's input.
	second := w.follow(first.ConversationID, "k2", "And the EU region?")
	w.do("GET", "/api/internal/queue", "", nil, &q)
	kinds := []string{}
	for _, it := range q.Items {
		kinds = append(kinds, it.Kind)
	}
	slices.Sort(kinds)
	if !q.Held || !slices.Equal(kinds, []string{"input", "paused"}) {
		t.Fatalf("queue %+v", q)
	}
	w.idle() // a held queue is idle: the test acts now
	if l := lifecycle(w.report(first.ConversationID)); !slices.Equal(l, []string{"started"}) {
		t.Fatalf("lifecycle while paused %v", l)
	}
	w.do("POST", "/api/internal/queue/release", "", nil, nil)
	w.idle()
	events := w.report(first.ConversationID)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded", "started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	if r := replies(events); !slices.Equal(r, []string{"Deploy 42 is out.", "The EU region too."}) {
		t.Fatalf("replies %q", r)
	}
	var inputs string
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT payload->>'inputMessageIds' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started' ORDER BY seq DESC LIMIT 1`, first.ConversationID).Scan(&inputs)
	if inputs != `["`+second.MessageID+`"]` {
		t.Fatalf("the second turn's inputs %s", inputs)
	}
}

func TestCompactionReplacesTheHistoryWithASummary(t *testing.T) {
	w := newWorld(t, map[string]string{"AGENT_CONTEXT_WINDOW_TOKENS": "100"})
	w.model.Respond(router, routed(), routed())
	w.model.Respond(titler, fakeai.Text("Launch plan"))
	w.model.Respond(agent, fakeai.Text("We ship on March 12; Priya owns it."), fakeai.Text("Priya."))
	w.model.Respond(summary, fakeai.Text("The user plans the Orbit launch: March 12, owner Priya."))
	first := w.webTurn("k1", "Plan the Orbit launch: March 12, owner Priya, risk is the billing migration.")
	w.follow(first.ConversationID, "k2", "Who owns it?")
	w.idle()
	calls := w.model.Calls(agent)
	last := calls[len(calls)-1].Prompt.Text()
	if !strings.Contains(last, "<conversation-summary>\nThe user plans the Orbit launch") || strings.Contains(last, "risk is the billing migration") {
		t.Fatalf("the prompt after compaction: %s", last)
	}
	var hv, after int
	conn := pgtest.Connect(t, w.db)
	conn.QueryRow(context.Background(), `SELECT history_version FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'compaction'`,
		first.ConversationID).Scan(&hv)
	conn.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND history_version = 1
		AND type IN ('user_message', 'assistant_message')`, first.ConversationID).Scan(&after)
	if hv != 1 || after != 3 {
		t.Fatalf("compaction at history_version %d, %d model rows after it", hv, after)
	}
	if l := lifecycle(w.report(first.ConversationID)); !slices.Equal(l, []string{"started", "succeeded", "started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
}

func TestAToolBehindAuthorizationWaitsForTheCallback(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Billing issues"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
		Then(fakeai.Text("Issue 7 has the rollback plan.")))
	got := w.webTurn("k1", "Which issue has the billing rollback plan?")
	if l := lifecycle(w.report(got.ConversationID)); !slices.Equal(l, []string{"started"}) {
		t.Fatalf("lifecycle while waiting %v", l)
	}
	var pending struct {
		Authorization struct{ AuthorizationURL string }
	}
	w.do("GET", "/api/conversations/"+got.ConversationID+"/pending-messages", userEmail, nil, &pending)
	link, err := url.Parse(pending.Authorization.AuthorizationURL)
	if err != nil || link.Host != "github.com" || link.Query().Get("state") == "" {
		t.Fatalf("authorization link %q", pending.Authorization.AuthorizationURL)
	}
	if code := w.do("GET", "/api/oauth/callback/github?state=authz_wrong&code=x", "", nil, nil); code != 404 {
		t.Fatalf("a callback for no turn: %d", code)
	}
	if code := w.do("GET", "/api/oauth/callback/github?state="+link.Query().Get("state")+"&code=gh-code-1", "", nil, nil); code != 200 {
		t.Fatalf("callback: %d", code)
	}
	w.idle()
	events := w.report(got.ConversationID)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	if r := replies(events); !slices.Equal(r, []string{"Issue 7 has the rollback plan."}) {
		t.Fatalf("replies %q", r)
	}
	calls := w.model.Calls(agent)
	if len(calls) != 2 || !strings.Contains(calls[1].Prompt.Results[0].Content, "Billing migration rollback plan") {
		t.Fatalf("the tool's result after the callback: %+v", calls)
	}
	var types []string
	rows, _ := pgtest.Connect(t, w.db).Query(context.Background(), `SELECT type FROM junior_conversation_events WHERE conversation_id = $1
		AND type LIKE 'authorization_%' ORDER BY seq`, got.ConversationID)
	for rows.Next() {
		var s string
		rows.Scan(&s)
		types = append(types, s)
	}
	if !slices.Equal(types, []string{"authorization_requested", "authorization_completed"}) {
		t.Fatalf("authorization rows %v", types)
	}
}

// recorder load of Junior's recording, then a web message that continues
// it: only the new turn calls the model, and its request carries the
// loaded history.
func TestALoadedConversationContinues(t *testing.T) {
	w := newWorld(t, nil)
	const id = "local:web:loaded-launch"
	out, err := exec.Command(recorder(t), "load", "--database-url", w.db, "--conversation-id", id,
		"../../../history/testdata/launch-planning.json").CombinedOutput()
	if err != nil {
		t.Fatalf("recorder load: %v\n%s", err, out)
	}
	w.model.Respond(router, routed())
	w.model.Respond(agent, fakeai.Text("Priya still owns it."))
	w.follow(id, "k-next", "Who owns the launch again?")
	w.idle()
	if n := len(w.model.AllCalls()); n != 2 {
		t.Fatalf("%d model calls; want the router's and the agent's", n)
	}
	prompt := w.model.Calls(agent)[0].Prompt
	text := prompt.Text()
	if !strings.Contains(text, "Help me plan the Orbit launch") || !strings.Contains(text, "Who owns the launch again?") || len(prompt.Results) == 0 {
		t.Fatalf("the prompt does not carry the loaded history: %s", text)
	}
	if l := lifecycle(w.report(id)); l[len(l)-1] != "succeeded" {
		t.Fatalf("lifecycle %v", l)
	}
}

func TestTheInternalRoutesRefuseBadInput(t *testing.T) {
	w := newWorld(t, nil)
	for _, body := range []map[string]any{
		{},
		{"id": "a", "channelId": "CEVAL1", "task": "digest"},                             // no interval
		{"id": "a", "channelId": "CEVAL1", "task": "  ", "intervalSeconds": 60},          // blank task
		{"id": "", "channelId": "CEVAL1", "task": "digest", "intervalSeconds": 60},       // no id
		{"id": "a", "channelId": "CEVAL1", "task": "digest", "intervalSeconds": "daily"}, // not a number
		{"id": "a", "channelId": "CEVAL1", "task": "digest", "intervalSeconds": 999999999999},
		{"id": "a", "channelId": "CEVAL1", "task": "dig\x00est", "intervalSeconds": 60},
	} {
		if code := w.do("POST", "/api/internal/automations", "", body, nil); code != 400 {
			t.Errorf("%v: %d; want 400", body, code)
		}
	}
	if code := w.do("GET", "/api/internal/conversations?since=yesterday", "", nil, nil); code != 400 {
		t.Errorf("a bad since: %d; want 400", code)
	}
	var n int
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT count(*) FROM agent_automations`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d automations written", n)
	}
	ok := map[string]any{"id": "daily", "channelId": "CEVAL1", "task": "digest", "intervalSeconds": 86400}
	if code := w.do("POST", "/api/internal/automations", "", ok, nil); code != 201 {
		t.Fatalf("an automation: %d", code)
	}
	if code := w.do("POST", "/api/internal/automations", "", ok, nil); code != 409 {
		t.Fatalf("the same id again: %d; want 409", code)
	}
}

// The routes a test drives the agent with are off unless the admin
// secret is set, and the heartbeat's secret does not open them.
func TestTheAdminRoutesNeedTheirOwnSecret(t *testing.T) {
	paths := []string{"/api/internal/idle", "/api/internal/queue", "/api/internal/conversations?since=2026-01-01T00:00:00Z"}
	get := func(w *world, path, key string) int {
		req, _ := http.NewRequest("GET", w.url+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	off := newWorld(t, map[string]string{"AGENT_ADMIN_SECRET": ""})
	on := newWorld(t, nil)
	for _, p := range paths {
		if code := get(off, p, secret); code != 404 {
			t.Errorf("%s with no admin secret set: %d; want 404", p, code)
		}
		if code := get(on, p, secret); code != 401 {
			t.Errorf("%s with the scheduler's secret: %d; want 401", p, code)
		}
		if code := get(on, p, adminKey); code != 200 {
			t.Errorf("%s with the admin secret: %d; want 200", p, code)
		}
	}
	// Reading a conversation: the scheduler's secret is not enough.
	got := on.webTurnScripted()
	if code := get(on, "/api/conversations/"+url.PathEscape(got), secret); code != 401 {
		t.Errorf("a report with the scheduler's secret: %d; want 401", code)
	}
	if code := get(on, "/api/conversations/"+url.PathEscape(got), adminKey); code != 200 {
		t.Errorf("a report with the admin secret: %d; want 200", code)
	}
	if code := get(on, "/api/conversations/%00", adminKey); code != 404 {
		t.Errorf("a NUL id with the admin secret: %d; want 404", code)
	}
}

// webTurnScripted runs one scripted web turn and returns its conversation.
func (w *world) webTurnScripted() string {
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Hello"))
	w.model.Respond(agent, fakeai.Text("Hi."))
	return w.webTurn("k-admin", "hello").ConversationID
}
