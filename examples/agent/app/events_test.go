package app_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// sign is GitHub's X-Hub-Signature-256 of body with secret.
func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// github is a webhook's headers as GitHub sends them; an empty value is
// left out.
func github(signature, event, delivery string) http.Header {
	h := http.Header{}
	for k, v := range map[string]string{"X-Hub-Signature-256": signature, "X-GitHub-Event": event, "X-GitHub-Delivery": delivery} {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

const opened = `{"action":"opened","issue":{"number":12,"title":"Crash on login"},"repository":{"full_name":"acme/app"}}`

// A webhook is taken only signed as GitHub signs, with the secret, over
// the body as sent; anything else is refused before it is read, and
// only the signed one is kept.
func TestAGitHubWebhookMustBeSignedAsGitHubSigns(t *testing.T) {
	f, _ := newAgent(t, nil)
	body := []byte(opened)
	good := sign(agenttest.GitHubWebhookSecret, body)
	// No text column takes these: the agent leaves them out of its rows.
	odd := []byte(`{"action":"created","issue":{"number":12},"comment":{"body":"a\u0000b \xff"},"repository":{"full_name":"acme/app"}}`)
	odd = bytes.Replace(odd, []byte(`\xff`), []byte{0xff}, 1)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(agent, fakeai.Text("Noted."))
	f.InsertEventAutomation("comments", "Read the comment.", fixture.EventFilter{Source: "github", Type: "issue_comment"})
	tests := []struct {
		name string
		h    http.Header
		body []byte
		want int
	}{
		{"no signature", github("", "issues", "d-1"), body, http.StatusUnauthorized},
		{"another secret", github(sign("another-secret", body), "issues", "d-2"), body, http.StatusUnauthorized},
		{"another scheme", github("sha1="+good[len("sha256="):], "issues", "d-3"), body, http.StatusUnauthorized},
		{"not hex", github("sha256=zz", "issues", "d-4"), body, http.StatusUnauthorized},
		{"cut short", github(good[:len(good)-2], "issues", "d-5"), body, http.StatusUnauthorized},
		{"the body changed", github(good, "issues", "d-6"), []byte(opened + " "), http.StatusUnauthorized},
		{"no event name", github(good, "", "d-7"), body, http.StatusBadRequest},
		{"no delivery id", github(good, "issues", ""), body, http.StatusBadRequest},
		{"a form, not JSON", github(sign(agenttest.GitHubWebhookSecret, []byte("payload=%7B%7D")), "issues", "d-8"), []byte("payload=%7B%7D"), http.StatusBadRequest},
		{"signed", github(good, "issues", "d-9"), body, http.StatusAccepted},
		{"signed, with a NUL and a byte not UTF-8", github(sign(agenttest.GitHubWebhookSecret, odd), "issue_comment", "d-10"), odd, http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := call(t, f, "POST", "/api/webhooks/github", tt.h, tt.body, nil); code != tt.want {
				t.Fatalf("status %d; want %d", code, tt.want)
			}
		})
	}
	waitIdle(t, f)
	if ids := column[string](t, db(t, f), `SELECT id FROM agent_events ORDER BY id`); !slices.Equal(ids, []string{"d-10", "d-9"}) {
		t.Fatalf("the events kept: %q", ids)
	}
	if p := m.Calls(agent)[0].Prompt.Text(); !strings.Contains(p, "Comment: ab \uFFFD") {
		t.Fatalf("the prompt: %s", p)
	}
}

// GitHub delivers again when it is unsure, even at once: a delivery id
// seen before is answered 200 duplicate and not dispatched again.
func TestADuplicateDeliveryIsNotDispatchedTwice(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(agent, fakeai.Text("Triaged."))
	f.InsertEventAutomation("triage", "Triage the new issue.", fixture.EventFilter{Source: "github", Type: "issues.opened"})
	body := []byte(opened)
	h := github(sign(agenttest.GitHubWebhookSecret, body), "issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	statuses := make([]string, 3)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			var out struct{ Status string }
			code, err := send(f, "POST", "/api/webhooks/github", h, body, &out)
			if err != nil {
				t.Error(err)
			}
			statuses[i] = http.StatusText(code) + " " + out.Status
		})
	}
	wg.Wait()
	slices.Sort(statuses)
	if want := []string{"Accepted accepted", "OK duplicate", "OK duplicate"}; !slices.Equal(statuses, want) {
		t.Fatalf("three deliveries at once: %q; want %q", statuses, want)
	}
	waitIdle(t, f)
	var out struct{ Status string }
	if code := call(t, f, "POST", "/api/webhooks/github", h, body, &out); code != http.StatusOK || out.Status != "duplicate" {
		t.Fatalf("a later delivery: %d %s", code, out.Status)
	}
	waitIdle(t, f)
	conn := db(t, f)
	if convs := column[string](t, conn, `SELECT conversation_id FROM junior_conversations WHERE source = 'event'`); len(convs) != 1 {
		t.Fatalf("conversations the automation started: %q", convs)
	}
	if n, posts := len(m.Calls(agent)), len(f.Slack().Calls("chat.postMessage")); n != 1 || posts != 1 {
		t.Fatalf("%d model calls and %d posts; want one of each", n, posts)
	}
}

// The event ingest route takes its own bearer, and names the events by
// source and id: the same id again is a duplicate.
func TestTheEventRouteTakesItsBearer(t *testing.T) {
	f, _ := newAgent(t, nil)
	event := map[string]any{"id": "e-1", "source": "ci", "type": "build.finished", "payload": map[string]int{"build": 1}}
	bearer := func(s string) http.Header { return http.Header{"Authorization": {"Bearer " + s}} }
	tests := []struct {
		name string
		h    http.Header
		body any
		want int
	}{
		{"no bearer", nil, event, http.StatusUnauthorized},
		{"the admin bearer", admin(), event, http.StatusUnauthorized},
		{"no type", bearer(agenttest.EventSecret), map[string]any{"source": "ci"}, http.StatusBadRequest},
		{"a NUL", bearer(agenttest.EventSecret), map[string]any{"source": "ci", "type": "a\x00b"}, http.StatusBadRequest},
		{"taken", bearer(agenttest.EventSecret), event, http.StatusAccepted},
		{"again", bearer(agenttest.EventSecret), event, http.StatusOK},
		{"from another source", bearer(agenttest.EventSecret), map[string]any{"id": "e-1", "source": "cd", "type": "deploy"}, http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := call(t, f, "POST", "/api/events", tt.h, tt.body, nil); code != tt.want {
				t.Fatalf("status %d; want %d", code, tt.want)
			}
		})
	}
	waitIdle(t, f)
}

// Without their secrets the event routes are off: an unset secret never
// means that anything is taken unsigned.
func TestTheEventRoutesAreOffWithoutTheirSecrets(t *testing.T) {
	f, _ := newAgent(t, map[string]string{"GITHUB_WEBHOOK_SECRET": "", "AGENT_EVENT_SECRET": ""})
	body := []byte(opened)
	if code := call(t, f, "POST", "/api/webhooks/github", github(sign("", body), "issues", "d-1"), body, nil); code != http.StatusNotFound {
		t.Errorf("the GitHub webhook: %d", code)
	}
	if code := call(t, f, "POST", "/api/events", http.Header{"Authorization": {"Bearer "}},
		map[string]string{"source": "ci", "type": "build"}, nil); code != http.StatusNotFound {
		t.Errorf("the event ingest: %d", code)
	}
}

// The admin routes that store event automations and watches check what
// they store.
func TestEventAutomationsAndWatchesAreChecked(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("CI"))
	m.Respond(agent, fakeai.Text("Sure."))
	conv := f.Run(fixture.WebMessage("Watch CI."))
	automation := map[string]any{"id": "a-1", "source": "github", "type": "issues", "task": "Triage.", "teamId": fixture.TeamID, "channelId": fixture.Channel}
	watch := map[string]any{"id": "w-1", "conversationId": conv.ID, "source": "ci", "resource": "ci:acme/app"}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range m {
			out[key] = val
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name, path string
		h          http.Header
		body       any
		want       int
	}{
		{"an automation without the admin bearer", "/api/internal/event-automations", nil, automation, http.StatusUnauthorized},
		{"an automation without a type", "/api/internal/event-automations", admin(), with(automation, "type", nil), http.StatusBadRequest},
		{"an automation without a channel", "/api/internal/event-automations", admin(), with(automation, "channelId", nil), http.StatusBadRequest},
		{"an automation", "/api/internal/event-automations", admin(), automation, http.StatusCreated},
		{"an automation whose id is taken", "/api/internal/event-automations", admin(), automation, http.StatusConflict},
		{"a watch without a resource", "/api/internal/watches", admin(), with(watch, "resource", nil), http.StatusBadRequest},
		{"a watch of no conversation", "/api/internal/watches", admin(), with(watch, "conversationId", "local:web:none"), http.StatusNotFound},
		{"a watch", "/api/internal/watches", admin(), watch, http.StatusCreated},
		{"a watch whose id is taken", "/api/internal/watches", admin(), watch, http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := call(t, f, "POST", tt.path, tt.h, tt.body, nil); code != tt.want {
				t.Fatalf("status %d; want %d", code, tt.want)
			}
		})
	}
}

// A Slack thread that watches an issue gets the watch's reply in the
// thread, as its other replies go.
func TestAWatchedSlackThreadGetsTheReplyInTheThread(t *testing.T) {
	f, _ := newAgent(t, nil)
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Issue 12"))
	m.Respond(agent, fakeai.Text("I'll watch it."), fakeai.Text("Issue 12 was opened again."))
	conv := f.Run(fixture.SlackMention("watch acme/app#12"))
	f.InsertWatch(conv, fixture.EventFilter{Source: "github", Type: "issues", Resource: "github:acme/app#12"}, "")
	next := conv.Continue(fixture.GitHubWebhook("issues", map[string]any{"action": "reopened", "issue": map[string]any{"number": 12},
		"repository": map[string]any{"full_name": "acme/app"}}))
	if !slices.Equal(turns(next), []string{"succeeded"}) || !slices.Equal(next.ReplyTexts(), []string{"Issue 12 was opened again."}) {
		t.Fatalf("the watch's call: turns %v, replies %q", turns(next), next.ReplyTexts())
	}
	posts := f.Slack().Calls("chat.postMessage")
	if last := posts[len(posts)-1]; len(posts) != 2 || last.Params["channel"] != fixture.Channel || last.Params["thread_ts"] != thread(conv) ||
		last.Params["text"] != "Issue 12 was opened again." {
		t.Fatalf("chat.postMessage %+v", posts)
	}
}
