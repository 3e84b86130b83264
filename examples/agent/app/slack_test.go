package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/examples/agent/slackio"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// thread is the Slack thread of a conversation the fixture started.
func thread(c *fixture.Conversation) string {
	return strings.TrimPrefix(c.ID, "slack:"+fixture.Channel+":")
}

func TestASlackMentionIsAnsweredInItsThread(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Launch date question"))
	m.Respond(agent, fakeai.Text("The launch is on March 12."))
	// The fixture sends a channel mention as Slack does: twice, with one ts.
	conv := f.Run(fixture.SlackMention("when is the launch?"))
	ts := thread(conv)
	if !slices.Equal(turns(conv), []string{"succeeded"}) || !slices.Equal(conv.ReplyTexts(), []string{"The launch is on March 12."}) {
		t.Fatalf("the call: turns %v, replies %q", turns(conv), conv.ReplyTexts())
	}
	conn := db(t, f)
	if n := one[int](t, conn, `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'message'
		AND payload->>'role' = 'user'`, conv.ID); n != 1 {
		t.Fatalf("the mention is stored %d times", n)
	}
	if r := f.Slack().Calls("reactions.add"); len(r) != 1 || r[0].Params["timestamp"] != ts || !slices.Equal(conv.Reactions, []string{"eyes"}) {
		t.Fatalf("reactions.add %+v, reactions %q", r, conv.Reactions)
	}
	var statuses []string
	for _, c := range f.Slack().Calls("assistant.threads.setStatus") {
		statuses = append(statuses, c.Params["status"])
	}
	if !slices.Equal(statuses, []string{"is thinking…", ""}) {
		t.Fatalf("statuses %q", statuses)
	}
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["thread_ts"] != ts || posts[0].Params["text"] != "The launch is on March 12." {
		t.Fatalf("chat.postMessage %+v", posts)
	}
	want := fmt.Sprintf(`<current-instruction author_id=%q author_name=%q slack_ts=%q>`, fixture.AuthorID, fixture.AuthorReal, ts)
	if p := m.Calls(agent)[0].Prompt.Text(); !strings.Contains(p, want) {
		t.Fatalf("the instruction: %s", p)
	}
	if s := one[string](t, conn, `SELECT payload->>'surface' FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_started'`,
		conv.ID); s != "slack" {
		t.Fatalf("surface %q", s)
	}
}

// A web message on a Slack conversation is a dashboard continue: the
// turn sees the thread, runs on the api surface, and its reply stays in
// the dashboard.
func TestADashboardContinuesASlackConversation(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Launch date"))
	m.Respond(agent, fakeai.Text("The launch is on March 12."), fakeai.Text("The beta opens on March 1."))
	conv := f.Run(fixture.SlackMention("when is the launch?"))
	body := map[string]string{"idempotencyKey": "dash-1", "message": "and the beta?"}
	if code := call(t, f, "POST", "/api/conversations/"+conv.ID+"/messages", as("someone@example.com"), body, nil); code != 403 {
		t.Fatalf("a dashboard continue by someone outside the thread: %d; want 403", code)
	}
	next := conv.Continue(fixture.WebMessage("and the beta?"))
	if next.ID != conv.ID || !slices.Equal(next.ReplyTexts(), []string{"The beta opens on March 1."}) {
		t.Fatalf("the dashboard continue: %s, replies %q", next.ID, next.ReplyTexts())
	}
	if posts := f.Slack().Calls("chat.postMessage"); len(posts) != 1 {
		t.Fatalf("chat.postMessage was called %d times; the dashboard's reply must not reach the thread", len(posts))
	}
	prompt := m.Calls(agent)[1].Prompt.Text()
	if !strings.Contains(prompt, "when is the launch?") || !strings.Contains(prompt, "The launch is on March 12.") || !strings.Contains(prompt, "and the beta?") {
		t.Fatalf("the dashboard turn's prompt lacks the thread or the new message: %s", prompt)
	}
	conn := db(t, f)
	surfaces := column[string](t, conn, `SELECT payload->>'surface' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started' ORDER BY seq`, conv.ID)
	if want := []string{"slack", "api"}; !slices.Equal(surfaces, want) {
		t.Fatalf("turn surfaces %q; want %q", surfaces, want)
	}
	if source := one[string](t, conn, `SELECT payload->'meta'->>'source' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'message' AND payload->>'text' = 'The beta opens on March 1.'`, conv.ID); source != "web" {
		t.Fatalf("the dashboard reply's source %q; want web", source)
	}
}

func TestTheSlackWebhookRefusesWhatSlackDidNotSign(t *testing.T) {
	f, _ := newAgent(t, nil)
	post := func(body []byte, ts int64, secret string) int {
		t.Helper()
		h := http.Header{"X-Slack-Request-Timestamp": {fmt.Sprint(ts)}, "X-Slack-Signature": {slackio.Sign(secret, ts, body)}}
		return call(t, f, "POST", "/api/webhooks/slack", h, body, nil)
	}
	if code := post([]byte(`{"type":"url_verification","challenge":"c-123"}`), time.Now().Unix(), agenttest.SigningSecret); code != 200 {
		t.Fatalf("url_verification: %d", code)
	}
	// A mention that, signed, would reach the model: nothing is scripted,
	// so one that got through would fail the test as unscripted.
	body, _ := json.Marshal(map[string]any{"type": "event_callback", "team_id": fixture.TeamID, "event_id": "Ev9",
		"event": map[string]any{"type": "app_mention", "user": fixture.AuthorID, "text": "<@UBOT> hi", "channel": fixture.Channel, "ts": "1790000009.000100"}})
	now := time.Now().Unix()
	tests := []struct {
		name   string
		ts     int64
		secret string
	}{
		{"another secret", now, "not-the-secret"},
		{"six minutes old", now - 360, agenttest.SigningSecret},
		{"six minutes ahead", now + 360, agenttest.SigningSecret},
	}
	for _, tt := range tests {
		if got := post(body, tt.ts, tt.secret); got != 401 {
			t.Errorf("%s: %d; want 401", tt.name, got)
		}
	}
	waitIdle(t, f)
	if n := one[int](t, db(t, f), `SELECT count(*) FROM junior_conversations`); n != 0 || len(f.Model().AllCalls()) != 0 {
		t.Fatalf("a refused event was taken: %d conversations, %d model calls", n, len(f.Model().AllCalls()))
	}
}
