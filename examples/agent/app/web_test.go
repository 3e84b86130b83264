package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/turn"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

func TestAWebMessageRunsAToolLoop(t *testing.T) {
	f, web := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Deploy 42 status check"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage})).
		Then(fakeai.Text("Deploy 42 went out at 14:02 UTC.")))
	conv := f.Run(fixture.WebMessage("Did deploy 42 go out?"))
	if !strings.HasPrefix(conv.ID, "local:web:") || !slices.Equal(turns(conv), []string{"succeeded"}) {
		t.Fatalf("the call: %s, turns %v", conv.ID, turns(conv))
	}
	if r := conv.ReplyTexts(); !slices.Equal(r, []string{"Deploy 42 went out at 14:02 UTC."}) {
		t.Fatalf("replies %q", r)
	}
	if c := conv.ToolCalls; len(c) != 1 || c[0].Name != "webFetch" || c[0].Status != "completed" || !strings.Contains(c[0].Output, "All systems operational") {
		t.Fatalf("tool calls %+v", c)
	}
	if ua := web.lastUserAgent(); ua != turn.UserAgent {
		t.Errorf("webFetch sent user agent %q; want %q", ua, turn.UserAgent)
	}
	// The model got the page the tool really fetched.
	calls := m.Calls(agent)
	if len(calls) != 2 || len(calls[1].Prompt.Results) != 1 || !strings.Contains(calls[1].Prompt.Results[0].Content, "Deploy 42 went out") {
		t.Fatalf("agent calls %+v", calls)
	}
	if !strings.Contains(calls[0].Prompt.Text(), "<current-instruction>\nDid deploy 42 go out?\n</current-instruction>") {
		t.Fatalf("the instruction the model got: %s", calls[0].Prompt.Text())
	}
	// The title is background work the call waited for.
	var report struct{ Title string }
	if call(t, f, "GET", "/api/conversations/"+conv.ID, as(fixture.AuthorEmail), nil, &report); report.Title != "Deploy 42 status check" {
		t.Errorf("title %q", report.Title)
	}
	// Who may post where.
	body := map[string]string{"idempotencyKey": "k2", "message": "hi"}
	if code := call(t, f, "POST", "/api/conversations/"+conv.ID+"/messages", as("someone@example.com"), body, nil); code != 403 {
		t.Errorf("a non-participant: %d; want 403", code)
	}
	if code := call(t, f, "POST", "/api/conversations", nil, body, nil); code != 401 {
		t.Errorf("no user: %d; want 401", code)
	}
	if code := call(t, f, "POST", "/api/conversations/local:web:nothing/messages", as(fixture.AuthorEmail), body, nil); code != 404 {
		t.Errorf("no such conversation: %d; want 404", code)
	}
	var health struct{ Status string }
	if call(t, f, "GET", "/health", nil, nil, &health); health.Status != "ok" {
		t.Errorf("health %+v", health)
	}
}

// A retried web message (the same idempotency key) is stored once and
// answered once.
func TestARetriedWebMessageIsADuplicate(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Hello"))
	m.Respond(agent, fakeai.Text("Hi."))
	type accepted struct{ ConversationID, MessageID, Status string }
	body := map[string]string{"idempotencyKey": "k1", "message": "hello"}
	var first, again accepted
	if code := call(t, f, "POST", "/api/conversations", as(fixture.AuthorEmail), body, &first); code != 200 || first.Status != "accepted" ||
		!strings.HasPrefix(first.ConversationID, "local:web:") || !strings.HasPrefix(first.MessageID, "api-msg:") {
		t.Fatalf("%d %+v", code, first)
	}
	call(t, f, "POST", "/api/conversations", as(fixture.AuthorEmail), body, &again)
	if again != (accepted{first.ConversationID, first.MessageID, "duplicate"}) {
		t.Fatalf("the same idempotency key again: %+v", again)
	}
	waitIdle(t, f)
	if l := lifecycle(t, f, first.ConversationID); !slices.Equal(l, []string{"started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
}

// skeleton is what a row shares with Junior's, ids, texts, times and
// usage aside: its type, schema version, key pattern and payload key
// sets (nested ones too, and the encoded model message's).
func skeleton(typ string, sv int, key *string, payload []byte) string {
	k := "null"
	if key != nil {
		k = keyPattern.ReplaceAllStringFunc(*key, func(s string) string {
			switch {
			case strings.HasPrefix(s, "turn_"):
				return "turn_<id>"
			case strings.HasPrefix(s, ":update:"):
				return ":update:<hex>"
			default:
				return "api-msg:<id>"
			}
		})
	}
	var p map[string]any
	json.Unmarshal(payload, &p)
	return fmt.Sprintf("%s v%d %s %s", typ, sv, k, keySets("", p))
}

var keyPattern = regexp.MustCompile(`turn_api-msg_[0-9a-f]{24}|api-msg:[0-9a-f]{24}|:update:[0-9a-f]{32}`)

func keySets(prefix string, v map[string]any) string {
	var keys []string
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{prefix + "{" + strings.Join(keys, ",") + "}"}
	for _, k := range keys {
		switch x := v[k].(type) {
		case map[string]any:
			if k != "usage" { // usage is the provider's
				parts = append(parts, keySets(prefix+k+".", x))
			}
		case string:
			var m map[string]any
			if k == "message" && json.Unmarshal([]byte(x), &m) == nil {
				keys := []string{}
				for mk := range m {
					keys = append(keys, mk)
				}
				sort.Strings(keys)
				parts = append(parts, prefix+"message:{"+strings.Join(keys, ",")+"}")
			}
		}
	}
	return strings.Join(parts, " ")
}

// One web turn with one tool call writes the rows of Junior's first turn
// in launch-planning.json: the same types in the same order, the same
// key patterns and the same payload key sets.
func TestAWebTurnWritesJuniorsRows(t *testing.T) {
	raw, err := os.ReadFile("../../../history/testdata/launch-planning.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Events []struct {
			Type           string          `json:"type"`
			SchemaVersion  int             `json:"schemaVersion"`
			IdempotencyKey *string         `json:"idempotencyKey"`
			Payload        json.RawMessage `json:"payload"`
		}
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range rec.Events[:14] {
		want = append(want, skeleton(e.Type, e.SchemaVersion, e.IdempotencyKey, e.Payload))
	}

	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Orbit launch plan"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage})).
		Then(fakeai.Text("**Orbit launch plan**: ship on March 12.")))
	conv := f.Run(fixture.WebMessage("Help me plan the Orbit launch."))
	rows, err := db(t, f).Query(t.Context(), `SELECT type, schema_version, idempotency_key, payload FROM junior_conversation_events
		WHERE conversation_id = $1 ORDER BY seq`, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for rows.Next() {
		var typ string
		var sv int
		var key *string
		var payload []byte
		if err := rows.Scan(&typ, &sv, &key, &payload); err != nil {
			t.Fatal(err)
		}
		have = append(have, skeleton(typ, sv, key, payload))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(have) != len(want) {
		t.Fatalf("%d rows; Junior's turn has %d:\n%s", len(have), len(want), strings.Join(have, "\n"))
	}
	for i := range want {
		if have[i] != want[i] {
			t.Errorf("seq %d:\n have %s\n want %s", i, have[i], want[i])
		}
	}
}

func TestBadWebInputWritesNothing(t *testing.T) {
	f, _ := newAgent(t, nil)
	for _, body := range []map[string]string{
		{"idempotencyKey": "k1", "message": "hi\x00there"},
		{"idempotencyKey": "k\x00", "message": "hi"},
		{"idempotencyKey": "", "message": "hi"},
		{"idempotencyKey": "k2", "message": "   "},
	} {
		if code := call(t, f, "POST", "/api/conversations", as(fixture.AuthorEmail), body, nil); code != 400 {
			t.Errorf("%q: %d; want 400", body, code)
		}
	}
	if n := one[int](t, db(t, f), `SELECT count(*) FROM junior_conversations`); n != 0 {
		t.Fatalf("%d conversations written", n)
	}
	if code := call(t, f, "GET", "/api/conversations/%00", as(fixture.AuthorEmail), nil, nil); code != 404 {
		t.Fatalf("a NUL id: %d; want 404", code)
	}
}

func TestAProviderErrorFailsTheTurnWithAReply(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("A question"))
	m.Respond(agent, fakeai.ProviderError(500))
	conv := f.Run(fixture.WebMessage("Did deploy 42 go out?"))
	if got := turns(conv); !slices.Equal(got, []string{"failed:model_execution_failed"}) {
		t.Fatalf("turns %v", got)
	}
	if r := conv.ReplyTexts(); len(r) != 1 || !strings.Contains(r[0], "model provider failed") {
		t.Fatalf("replies %q", r)
	}
}

func TestAForkCopiesTheRowsAndGoesOn(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Launch plan"))
	m.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": statusPage})).
		Then(fakeai.Text("Ship on March 12.")))
	src := f.Run(fixture.WebMessage("When do we ship?"))
	reply := src.Replies[0]
	fork := src.Fork(reply)
	if !strings.HasPrefix(fork.ID, "local:web:") || fork.ID == src.ID {
		t.Fatalf("fork %q of %q", fork.ID, src.ID)
	}
	// A retried fork (the same idempotency key) is the same fork.
	forks := "/api/conversations/" + src.ID + "/forks"
	var first, again struct{ ConversationID string }
	call(t, f, "POST", forks, as(fixture.AuthorEmail), map[string]string{"idempotencyKey": "f1", "messageId": reply.MessageID}, &first)
	call(t, f, "POST", forks, as(fixture.AuthorEmail), map[string]string{"idempotencyKey": "f1", "messageId": reply.MessageID}, &again)
	if first.ConversationID == "" || again != first {
		t.Fatalf("a retried fork made %q, then %q", first.ConversationID, again.ConversationID)
	}
	conn := db(t, f)
	input := one[string](t, conn, `SELECT payload->>'messageId' FROM junior_conversation_events WHERE conversation_id = $1
		AND type = 'message' AND payload->>'role' = 'user'`, src.ID)
	for _, bad := range []struct {
		user, messageID string
		want            int
	}{
		{fixture.AuthorEmail, input, 409}, // a user message is no cut point
		{fixture.AuthorEmail, "turn_x:assistant:1", 409},
		{"someone@example.com", reply.MessageID, 403},
	} {
		if code := call(t, f, "POST", forks, as(bad.user), map[string]string{"idempotencyKey": "f2", "messageId": bad.messageID}, nil); code != bad.want {
			t.Errorf("fork at %s as %s: %d; want %d", bad.messageID, bad.user, code, bad.want)
		}
	}
	// Every row up to the reply, the same seq, key, type, payload and
	// time; then the fork note.
	if diff := one[int](t, conn, `SELECT count(*) FROM (
			(SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $1
			 EXCEPT SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $2)
			UNION ALL
			(SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $2 AND idempotency_key IS DISTINCT FROM 'fork:note'
			 EXCEPT SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at FROM junior_conversation_events WHERE conversation_id = $1)
		) d`, src.ID, fork.ID); diff != 0 {
		t.Fatalf("%d rows differ between the source and its fork", diff)
	}
	if title := one[string](t, conn, `SELECT title FROM junior_conversations WHERE conversation_id = $1`, fork.ID); title != "Fork: Launch plan" {
		t.Errorf("the fork's title %q", title)
	}
	if from := one[string](t, conn, `SELECT forked_from_conversation_id FROM junior_conversations WHERE conversation_id = $1`, fork.ID); from != src.ID {
		t.Errorf("the fork is forked from %q", from)
	}
	// The fork goes on from the copied history.
	m.Respond(agent, fakeai.Text("Still March 12."))
	next := fork.Continue(fixture.WebMessage("And the owner?"))
	if !slices.Equal(next.ReplyTexts(), []string{"Still March 12."}) {
		t.Fatalf("the fork's reply %q", next.ReplyTexts())
	}
	calls := m.Calls(agent)
	last := calls[len(calls)-1].Prompt.Text()
	if !strings.Contains(last, "When do we ship?") || !strings.Contains(last, "This Conversation is a fork") || !strings.Contains(last, "And the owner?") {
		t.Fatalf("the fork's prompt: %s", last)
	}
}

func TestCompactionReplacesTheHistoryWithASummary(t *testing.T) {
	f, _ := newAgent(t, map[string]string{"AGENT_CONTEXT_WINDOW_TOKENS": "100"})
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Launch plan"))
	m.Respond(agent, fakeai.Text("We ship on March 12; Priya owns it."), fakeai.Text("Priya."))
	m.Respond(summary, fakeai.Text("The user plans the Orbit launch: March 12, owner Priya."))
	first := f.Run(fixture.WebMessage("Plan the Orbit launch: March 12, owner Priya, risk is the billing migration."))
	next := first.Continue(fixture.WebMessage("Who owns it?"))
	if !slices.Equal(turns(first), []string{"succeeded"}) || !slices.Equal(turns(next), []string{"succeeded"}) {
		t.Fatalf("turns %v, then %v", turns(first), turns(next))
	}
	calls := m.Calls(agent)
	last := calls[len(calls)-1].Prompt.Text()
	if !strings.Contains(last, "<conversation-summary>\nThe user plans the Orbit launch") || strings.Contains(last, "risk is the billing migration") {
		t.Fatalf("the prompt after compaction: %s", last)
	}
	conn := db(t, f)
	hv := one[int](t, conn, `SELECT history_version FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'compaction'`, first.ID)
	after := one[int](t, conn, `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND history_version = 1
		AND type IN ('user_message', 'assistant_message')`, first.ID)
	if hv != 1 || after != 3 {
		t.Fatalf("compaction at history_version %d, %d model rows after it", hv, after)
	}
}

// Junior's recorded conversation, loaded as history, then a web message
// that continues it: only the new turn calls the model, and its request
// carries the loaded history.
func TestALoadedConversationContinues(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(agent, fakeai.Text("Priya still owns it."))
	conv := f.Run(fixture.WebMessage("Who owns the launch again?"),
		fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json")))
	if n := len(m.AllCalls()); n != 2 {
		t.Fatalf("%d model calls; want the router's and the agent's", n)
	}
	prompt := m.Calls(agent)[0].Prompt
	if text := prompt.Text(); !strings.Contains(text, "Help me plan the Orbit launch") || !strings.Contains(text, "Who owns the launch again?") || len(prompt.Results) == 0 {
		t.Fatalf("the prompt does not carry the loaded history: %s", text)
	}
	if !slices.Equal(turns(conv), []string{"succeeded"}) || !slices.Equal(conv.ReplyTexts(), []string{"Priya still owns it."}) {
		t.Fatalf("the call: turns %v, replies %q", turns(conv), conv.ReplyTexts())
	}
}
