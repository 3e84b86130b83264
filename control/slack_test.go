package control

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/slack-go/slack"
)

// TestSlackGoAgainstMock drives the Slack mock through the proxy with
// slack-go, seeding it and reading what the agent did over the control API,
// as a test in another language would.
func TestSlackGoAgainstMock(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	p, hc := front(t, up, proxy.ModeReplay, t.TempDir(), proxy.Rule{Name: "slack", URLPrefix: up.URL + "/api/", Mode: proxy.ModeMock})
	do := newControl(t, p, "tok").do
	if code, body := do("POST", "/v1/slack/seed", `{"users":[{"id":"U0ALICE001","name":"alice","real_name":"Alice Example"}],
		"channels":[{"id":"C0EVAL0001","name":"eval"}],
		"messages":[{"channel":"C0EVAL0001","ts":"1790000000.000100","user":"U0ALICE001","text":"<@UBOT000001> is the deploy done?"}]}`); code != http.StatusOK {
		t.Fatalf("seed: %d %s", code, body)
	}
	if code, body := do("POST", "/v1/slack/seed", `{"messages":[`); code != http.StatusBadRequest || !strings.Contains(body, "users, channels, messages") {
		t.Fatalf("bad seed: %d %s", code, body)
	}

	api := slack.New("xoxb-test", slack.OptionAPIURL(up.URL+"/api/"), slack.OptionHTTPClient(hc))
	_, ts, err := api.PostMessage("C0EVAL0001", slack.MsgOptionText("Yes, it finished at noon.", false), slack.MsgOptionTS("1790000000.000100"))
	if err != nil {
		t.Fatal(err)
	}
	replies, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C0EVAL0001", Timestamp: "1790000000.000100"})
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 2 || replies[1].Timestamp != ts || replies[1].Text != "Yes, it finished at noon." {
		t.Fatalf("thread after the reply: %+v", replies)
	}

	if code, body := do("POST", "/v1/slack/errors", `{"method":"chat.postMessage","error":"ratelimited","retryAfterMs":7000}`); code != http.StatusNoContent {
		t.Fatalf("queue error: %d %s", code, body)
	}
	_, _, err = api.PostMessage("C0EVAL0001", slack.MsgOptionText("again", false))
	var limited *slack.RateLimitedError
	if !errors.As(err, &limited) || limited.RetryAfter != 7*time.Second {
		t.Fatalf("want a rate limit of 7s, got %v", err)
	}
	if code, body := do("POST", "/v1/slack/errors", `{"method":""}`); code != http.StatusBadRequest || !strings.Contains(body, "ratelimited") {
		t.Fatalf("bad error queue: %d %s", code, body)
	}

	_, body := do("GET", "/v1/slack/calls?method=chat.postMessage", "")
	var calls struct {
		Calls []struct {
			Method string            `json:"method"`
			Params map[string]string `json:"params"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(body), &calls); err != nil {
		t.Fatal(err)
	}
	if len(calls.Calls) != 2 || calls.Calls[0].Params["thread_ts"] != "1790000000.000100" || calls.Calls[0].Params["text"] != "Yes, it finished at noon." {
		t.Fatalf("calls: %s", body)
	}
	_, body = do("GET", "/v1/slack/channels/C0EVAL0001/messages", "")
	if !strings.Contains(body, "Yes, it finished at noon.") || strings.Contains(body, `"again"`) {
		t.Fatalf("channel messages: %s", body)
	}
	// A method the mock does not know fails the test scope it came in.
	if err := p.BeginScope("unknown method"); err != nil {
		t.Fatal(err)
	}
	if _, err := api.GetTeamInfo(); err == nil || !strings.Contains(err.Error(), "unknown_method") {
		t.Fatalf("team.info: %v", err)
	}
	res, err := p.EndScope("unknown method", true)
	if !errors.Is(err, proxy.ErrUnknownSlackMethod) || len(res.UnknownSlack) != 1 || res.UnknownSlack[0] != "team.info" {
		t.Fatalf("EndScope: %+v, %v", res, err)
	}
	if hits.Load() != 0 {
		t.Fatalf("mock mode reached the upstream %d times", hits.Load())
	}
	if s := p.Stats(); s.Mocked != 4 || s.Missed != 0 {
		t.Fatalf("stats: %+v", s)
	}
}
