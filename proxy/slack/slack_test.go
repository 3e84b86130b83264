package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"
)

func TestThreadConversationWithSlackGo(t *testing.T) {
	m := New()
	m.AddUser(User{ID: "U0ADA00001", Name: "ada", RealName: "Ada Quill", Email: "ada@example.com"})
	m.AddChannel(Channel{ID: "C0CHAN0001", Name: "deploys"})
	parent := m.AddMessage("C0CHAN0001", Message{TS: "1790000001.000100", User: "U0ADA00001", Text: "did the deploy go out?"})
	m.AddMessage("C0CHAN0001", Message{TS: "1790000001.000200", ThreadTS: parent.TS, User: "U0ADA00001", Text: "it was at 14:00"})
	m.Subscribe("C0CHAN0001", parent.TS)
	srv := httptest.NewServer(m)
	defer srv.Close()
	api := slackgo.New("xoxb-test-token", slackgo.OptionAPIURL(srv.URL+"/api/"))

	// The agent reads the seeded thread.
	msgs, _, _, err := api.GetConversationReplies(&slackgo.GetConversationRepliesParameters{ChannelID: "C0CHAN0001", Timestamp: parent.TS})
	if err != nil || len(msgs) != 2 || msgs[0].Text != "did the deploy go out?" || msgs[1].Text != "it was at 14:00" {
		t.Fatalf("replies %+v %v", msgs, err)
	}
	// It says it is working, replies in the thread and reacts.
	if err := api.SetAssistantThreadsStatus(slackgo.AssistantThreadsSetStatusParameters{ChannelID: "C0CHAN0001", ThreadTS: parent.TS, Status: "is thinking…"}); err != nil {
		t.Fatal(err)
	}
	if m.Status("C0CHAN0001", parent.TS) != "is thinking…" {
		t.Fatalf("status %q", m.Status("C0CHAN0001", parent.TS))
	}
	_, ts, err := api.PostMessage("C0CHAN0001", slackgo.MsgOptionText("Yes, at 14:02.", false), slackgo.MsgOptionTS(parent.TS))
	if err != nil {
		t.Fatal(err)
	}
	if err := api.AddReaction("white_check_mark", slackgo.ItemRef{Channel: "C0CHAN0001", Timestamp: parent.TS}); err != nil {
		t.Fatal(err)
	}
	if err := api.AddReaction("white_check_mark", slackgo.ItemRef{Channel: "C0CHAN0001", Timestamp: parent.TS}); err == nil || err.Error() != "already_reacted" {
		t.Fatalf("second reaction: %v", err)
	}
	if _, _, _, err := api.UpdateMessage("C0CHAN0001", ts, slackgo.MsgOptionText("Yes, at 14:02 UTC.", false)); err != nil {
		t.Fatal(err)
	}
	if _, err := api.PostEphemeral("C0CHAN0001", "U0ADA00001", slackgo.MsgOptionText("only you see this", false)); err != nil {
		t.Fatal(err)
	}
	msgs, _, _, err = api.GetConversationReplies(&slackgo.GetConversationRepliesParameters{ChannelID: "C0CHAN0001", Timestamp: parent.TS})
	if err != nil || len(msgs) != 3 || msgs[2].Text != "Yes, at 14:02 UTC." || msgs[0].Reactions[0].Name != "white_check_mark" {
		t.Fatalf("thread after the turn: %+v %v", msgs, err)
	}
	for _, msg := range m.Messages("C0CHAN0001") {
		if strings.Contains(msg.Text, "only you") {
			t.Fatal("an ephemeral message is visible to all")
		}
	}
	if n := len(m.Calls("chat.postEphemeral")); n != 1 {
		t.Fatalf("%d ephemeral calls captured", n)
	}
	link, err := api.GetPermalink(&slackgo.PermalinkParameters{Channel: "C0CHAN0001", Ts: ts})
	if err != nil || !strings.HasSuffix(link, "/archives/C0CHAN0001/p"+strings.ReplaceAll(ts, ".", "")) {
		t.Fatalf("permalink %q %v", link, err)
	}
}

func TestErrorsAndRateLimits(t *testing.T) {
	m := New()
	m.AddChannel(Channel{ID: "C0CHAN0001", Name: "deploys"})
	m.AddChannel(Channel{ID: "C0PRIV0001", Name: "secret", IsPrivate: true, NotMember: true})
	m.AddUser(User{ID: "U0ADA00001", Name: "ada", Email: "ada@example.com"})
	srv := httptest.NewServer(m)
	defer srv.Close()
	api := slackgo.New("xoxb-test-token", slackgo.OptionAPIURL(srv.URL+"/api/"))

	m.QueueRateLimit("chat.postMessage", 2*time.Second)
	_, _, err := api.PostMessage("C0CHAN0001", slackgo.MsgOptionText("hi", false))
	var limited *slackgo.RateLimitedError
	if !errors.As(err, &limited) || limited.RetryAfter != 2*time.Second {
		t.Fatalf("rate limit: %v", err)
	}
	// Less than a second rounds up, as the faults' Retry-After does: a
	// client sees no Retry-After at 0 and gives up instead of waiting.
	for _, tt := range []struct {
		after time.Duration
		want  string
	}{{500 * time.Millisecond, "1"}, {time.Millisecond, "1"}, {1500 * time.Millisecond, "2"}, {3 * time.Second, "3"}} {
		m.QueueRateLimit("chat.postMessage", tt.after)
		resp, err := http.PostForm(srv.URL+"/api/chat.postMessage", url.Values{"token": {"xoxb-test-token"}, "channel": {"C0CHAN0001"}, "text": {"hi"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != tt.want {
			t.Errorf("rate limit of %v: %d, Retry-After %q; want 429, %q", tt.after, resp.StatusCode, resp.Header.Get("Retry-After"), tt.want)
		}
	}
	m.QueueError("chat.postMessage", "missing_scope", map[string]any{"needed": "chat:write", "provided": "channels:read"})
	if _, _, err := api.PostMessage("C0CHAN0001", slackgo.MsgOptionText("hi", false)); err == nil || !strings.Contains(err.Error(), "missing_scope") {
		t.Fatalf("missing_scope: %v", err)
	}
	for name, call := range map[string]func() error{
		"channel_not_found": func() error {
			_, _, err := api.PostMessage("C0NOPE0001", slackgo.MsgOptionText("hi", false))
			return err
		},
		"not_in_channel": func() error {
			_, _, err := api.PostMessage("C0PRIV0001", slackgo.MsgOptionText("hi", false))
			return err
		},
		"user_not_found":  func() error { _, err := api.GetUserInfo("U0NOPE0001"); return err },
		"users_not_found": func() error { _, err := api.GetUserByEmail("nobody@example.com"); return err },
		"invalid_auth": func() error {
			_, err := slackgo.New("not-a-token", slackgo.OptionAPIURL(srv.URL+"/api/")).AuthTest()
			return err
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if u, err := api.GetUserByEmail("ADA@example.com"); err != nil || u.ID != "U0ADA00001" {
		t.Fatalf("lookupByEmail: %+v %v", u, err)
	}
	// A method the mock does not know is an error, and on the record.
	if _, err := api.GetTeamInfo(); err == nil || !strings.Contains(err.Error(), "unknown_method") {
		t.Fatalf("unknown method: %v", err)
	}
	if got := m.Unknown(); len(got) != 1 || got[0] != "team.info" {
		t.Fatalf("unknown %v", got)
	}
}

// TestJSONBodies: agents on the Node SDK post JSON with a bearer token.
func TestJSONBodies(t *testing.T) {
	m := New()
	m.AddChannel(Channel{ID: "C0CHAN0001", Name: "deploys"})
	srv := httptest.NewServer(m)
	defer srv.Close()
	post := func(body string) string {
		req, _ := http.NewRequest("POST", srv.URL+"/api/chat.postMessage", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer xoxb-test-token")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := post(`{"channel":"C0CHAN0001","text":"shipped","blocks":[{"type":"section","text":{"type":"mrkdwn","text":"shipped"}}]}`); !strings.Contains(got, `"ok":true`) {
		t.Fatalf("JSON post: %s", got)
	}
	msgs := m.Messages("C0CHAN0001")
	if len(msgs) != 1 || msgs[0].Text != "shipped" || !strings.Contains(string(msgs[0].Blocks), "mrkdwn") {
		t.Fatalf("messages %+v", msgs)
	}
	if got := post(`{"channel":`); !strings.Contains(got, `"error":"invalid_json"`) {
		t.Fatalf("malformed JSON: %s", got)
	}
	if len(m.Messages("C0CHAN0001")) != 1 {
		t.Fatal("a malformed call changed the state")
	}
}

// FuzzServeHTTP: any body, in any of the encodings, gets a JSON answer
// and never a panic.
func FuzzServeHTTP(f *testing.F) {
	f.Add("chat.postMessage", uint8(0), []byte(`{"channel":"C0CHAN0001","text":"hi","thread_ts":"1790000001.000100"}`))
	f.Add("conversations.replies", uint8(1), []byte("channel=C0CHAN0001&ts=1790000001.000100"))
	f.Add("reactions.add", uint8(2), []byte("--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nok\r\n--x--\r\n"))
	types := []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}
	f.Fuzz(func(t *testing.T, method string, ct uint8, body []byte) {
		m := New()
		m.AddChannel(Channel{ID: "C0CHAN0001", Name: "deploys"})
		m.AddMessage("C0CHAN0001", Message{TS: "1790000001.000100", Text: "parent"})
		req := httptest.NewRequest("POST", "/api/"+url.PathEscape(method), bytes.NewReader(body))
		req.Header.Set("Content-Type", types[int(ct)%len(types)])
		req.Header.Set("Authorization", "Bearer xoxb-test")
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("not JSON: %q", rec.Body.Bytes())
		}
	})
}
