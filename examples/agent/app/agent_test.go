package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/proxy/slack"
	"github.com/jackc/pgx/v5"
)

type accepted struct {
	ConversationID, MessageID, Status string
}

func TestAWebMessageRunsAToolLoop(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Deploy 42 status check"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/status"})).
		Then(fakeai.Text("Deploy 42 went out at 14:02 UTC.")))
	var got accepted
	body := map[string]string{"idempotencyKey": "k1", "message": "Did deploy 42 go out?"}
	if code := w.do("POST", "/api/conversations", userEmail, body, &got); code != 200 || got.Status != "accepted" ||
		!strings.HasPrefix(got.ConversationID, "local:web:") || !strings.HasPrefix(got.MessageID, "api-msg:") {
		t.Fatalf("%d %+v", code, got)
	}
	var again accepted
	if w.do("POST", "/api/conversations", userEmail, body, &again); again != (accepted{got.ConversationID, got.MessageID, "duplicate"}) {
		t.Fatalf("the same idempotency key again: %+v", again)
	}
	w.idle()
	events := w.report(got.ConversationID)
	if l := lifecycle(events); !slices.Equal(l, []string{"started", "succeeded"}) {
		t.Fatalf("lifecycle %v", l)
	}
	if r := replies(events); !slices.Equal(r, []string{"Deploy 42 went out at 14:02 UTC."}) {
		t.Fatalf("replies %q", r)
	}
	var call map[string]any
	for _, e := range events {
		if e.Data["type"] == "tool_calls" {
			call = e.Data["calls"].([]any)[0].(map[string]any)
		}
	}
	if call["name"] != "webFetch" || call["status"] != "completed" || !strings.Contains(call["output"].(string), "All systems operational") {
		t.Fatalf("tool call %v", call)
	}
	if ua, _ := w.ua.Load().(string); ua != "junior-bot/0.1" {
		t.Errorf("webFetch sent user agent %q", ua)
	}
	// The model got the page the tool really fetched.
	calls := w.model.Calls(agent)
	if len(calls) != 2 || len(calls[1].Prompt.Results) != 1 || !strings.Contains(calls[1].Prompt.Results[0].Content, "Deploy 42 went out") {
		t.Fatalf("agent calls %+v", calls)
	}
	if !strings.Contains(calls[0].Prompt.Text(), "<current-instruction>\nDid deploy 42 go out?\n</current-instruction>") {
		t.Fatalf("the instruction the model got: %s", calls[0].Prompt.Text())
	}
	w.until("the title", func() bool {
		var r struct{ Title string }
		w.do("GET", "/api/conversations/"+got.ConversationID, userEmail, nil, &r)
		return r.Title == "Deploy 42 status check"
	})
	// Who may post where.
	if code := w.do("POST", "/api/conversations/"+got.ConversationID+"/messages", "someone@example.com",
		map[string]string{"idempotencyKey": "k2", "message": "hi"}, nil); code != 403 {
		t.Errorf("a non-participant: %d; want 403", code)
	}
	if code := w.do("POST", "/api/conversations", "", body, nil); code != 401 {
		t.Errorf("no user: %d; want 401", code)
	}
	if code := w.do("POST", "/api/conversations/local:web:nothing/messages", userEmail, body, nil); code != 404 {
		t.Errorf("no such conversation: %d; want 404", code)
	}
	var health struct{ Status string }
	if w.do("GET", "/health", "", nil, &health); health.Status != "ok" {
		t.Errorf("health %+v", health)
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

	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Orbit launch plan"))
	w.model.Respond(agent, fakeai.ToolCalls(fakeai.Call("webFetch", map[string]string{"url": w.web.URL + "/status"})).
		Then(fakeai.Text("**Orbit launch plan**: ship on March 12.")))
	var got accepted
	w.do("POST", "/api/conversations", userEmail, map[string]string{"idempotencyKey": "k1", "message": "Help me plan the Orbit launch."}, &got)
	w.idle()
	conn := pgtest.Connect(t, w.db)
	rows, err := conn.Query(context.Background(), `SELECT type, schema_version, idempotency_key, payload FROM junior_conversation_events
		WHERE conversation_id = $1 ORDER BY seq`, got.ConversationID)
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

func TestASlackMentionIsAnsweredInItsThread(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Launch date question"))
	w.model.Respond(agent, fakeai.Text("The launch is on March 12."))
	ts := "1790000000.000100"
	w.slack.AddMessage("CEVAL1", slack.Message{TS: ts, User: "U0PERSON1", Text: "<@UBOT> when is the launch?"})
	// A channel mention arrives twice with one ts.
	for _, typ := range []string{"app_mention", "message"} {
		ev := map[string]any{"type": typ, "user": "U0PERSON1", "text": "<@UBOT> when is the launch?", "channel": "CEVAL1", "ts": ts, "event_ts": ts}
		if typ == "message" {
			ev["channel_type"] = "channel"
		}
		if code := w.slackEvent(ev); code != 200 {
			t.Fatalf("%s: %d", typ, code)
		}
	}
	w.idle()
	id := "slack:CEVAL1:" + ts
	conn := pgtest.Connect(t, w.db)
	var inputs int
	conn.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'message'
		AND payload->>'role' = 'user'`, id).Scan(&inputs)
	if inputs != 1 {
		t.Fatalf("the mention is stored %d times", inputs)
	}
	if r := w.slack.Calls("reactions.add"); len(r) != 1 || r[0].Params["timestamp"] != ts {
		t.Fatalf("reactions.add %+v", r)
	}
	var statuses []string
	for _, c := range w.slack.Calls("assistant.threads.setStatus") {
		statuses = append(statuses, c.Params["status"])
	}
	if !slices.Equal(statuses, []string{"is thinking…", ""}) {
		t.Fatalf("statuses %q", statuses)
	}
	posts := w.slack.Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["thread_ts"] != ts || posts[0].Params["text"] != "The launch is on March 12." {
		t.Fatalf("chat.postMessage %+v", posts)
	}
	if !strings.Contains(w.model.Calls(agent)[0].Prompt.Text(), `<current-instruction author_id="U0PERSON1" author_name="Person One" slack_ts="`+ts+`">`) {
		t.Fatalf("the instruction: %s", w.model.Calls(agent)[0].Prompt.Text())
	}
	var started struct{ Surface string }
	conn.QueryRow(context.Background(), `SELECT payload->>'surface' FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_started'`,
		id).Scan(&started.Surface)
	if started.Surface != "slack" {
		t.Fatalf("surface %q", started.Surface)
	}
}

// A web message on a Slack conversation is a dashboard continue: the
// turn sees the thread, runs on the api surface, and its reply stays in
// the dashboard.
func TestADashboardContinuesASlackConversation(t *testing.T) {
	w := newWorld(t, nil)
	w.model.Respond(router, routed())
	w.model.Respond(titler, fakeai.Text("Launch date"))
	w.model.Respond(agent, fakeai.Text("The launch is on March 12."))
	ts := "1790000000.000200"
	w.mention(ts, "when is the launch?")
	w.idle()
	id := "slack:CEVAL1:" + ts
	body := map[string]string{"idempotencyKey": "dash-1", "message": "and the beta?"}
	if code := w.do("POST", "/api/conversations/"+id+"/messages", "someone@example.com", body, nil); code != 403 {
		t.Fatalf("a dashboard continue by someone outside the thread: %d; want 403", code)
	}
	w.model.Respond(router, routed())
	w.model.Respond(agent, fakeai.Text("The beta opens on March 1."))
	var got struct{ ConversationID, MessageID, Status string }
	if code := w.do("POST", "/api/conversations/"+id+"/messages", userEmail, body, &got); code != 200 || got.Status != "accepted" || got.ConversationID != id {
		t.Fatalf("a dashboard continue: %d %+v", code, got)
	}
	w.idle()
	if posts := w.slack.Calls("chat.postMessage"); len(posts) != 1 {
		t.Fatalf("chat.postMessage was called %d times; the dashboard's reply must not reach the thread", len(posts))
	}
	prompt := w.model.Calls(agent)[1].Prompt.Text()
	if !strings.Contains(prompt, "when is the launch?") || !strings.Contains(prompt, "The launch is on March 12.") || !strings.Contains(prompt, "and the beta?") {
		t.Fatalf("the dashboard turn's prompt lacks the thread or the new message: %s", prompt)
	}
	var replies []string
	for _, e := range w.report(id) {
		if e.Data["type"] == "message" && e.Data["role"] == "assistant" {
			replies = append(replies, e.Data["text"].(string))
		}
	}
	if want := []string{"The launch is on March 12.", "The beta opens on March 1."}; !slices.Equal(replies, want) {
		t.Fatalf("the replies %q; want %q", replies, want)
	}
	conn := pgtest.Connect(t, w.db)
	rows, err := conn.Query(context.Background(), `SELECT payload->>'surface' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started' ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	surfaces, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"slack", "api"}; !slices.Equal(surfaces, want) {
		t.Fatalf("turn surfaces %q; want %q", surfaces, want)
	}
	var source string
	conn.QueryRow(context.Background(), `SELECT payload->'meta'->>'source' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'message' AND payload->>'text' = 'The beta opens on March 1.'`, id).Scan(&source)
	if source != "web" {
		t.Fatalf("the dashboard reply's source %q; want web", source)
	}
}

func TestTheSlackWebhookRefusesWhatSlackDidNotSign(t *testing.T) {
	w := newWorld(t, nil)
	if code := w.postSigned([]byte(`{"type":"url_verification","challenge":"c-123"}`), time.Now().Unix(), signing); code != 200 {
		t.Fatalf("url_verification: %d", code)
	}
	// A mention that, signed, would reach the model: nothing is scripted,
	// so one that got through would fail the test as unscripted.
	w.slack.AddMessage("CEVAL1", slack.Message{TS: "1790000009.000100", User: "U0PERSON1", Text: "<@UBOT> hi"})
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": teamID, "event_id": "Ev9",
		"event": map[string]any{"type": "app_mention", "user": "U0PERSON1", "text": "<@UBOT> hi", "channel": "CEVAL1", "ts": "1790000009.000100"}})
	now := time.Now().Unix()
	tests := []struct {
		name string
		ts   int64
		key  string
	}{
		{"another secret", now, "not-the-secret"},
		{"six minutes old", now - 360, signing},
		{"six minutes ahead", now + 360, signing},
	}
	for _, tt := range tests {
		if got := w.postSigned(body, tt.ts, tt.key); got != 401 {
			t.Errorf("%s: %d; want 401", tt.name, got)
		}
	}
	w.idle()
	var n int
	pgtest.Connect(t, w.db).QueryRow(context.Background(), `SELECT count(*) FROM junior_conversations`).Scan(&n)
	if n != 0 || len(w.model.AllCalls()) != 0 {
		t.Fatalf("a refused event was taken: %d conversations, %d model calls", n, len(w.model.AllCalls()))
	}
}
