package control

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// TestControlEvents is what a test in another language does: read the
// events over SSE, hold the reply, release it.
func TestControlEvents(t *testing.T) {
	up := echo(t)
	p, hc := front(t, up, proxy.ModeAuto, t.TempDir(), proxy.Rule{Name: "slack", URLPrefix: up.URL + "/api/", Mode: proxy.ModeMock})
	ctl := newControl(t, p, "tok")
	sm := p.Slack.(*slack.Mock)
	if code, _ := ctl.do("GET", "/v1/events?hold=stream_event", ""); code != http.StatusBadRequest {
		t.Fatalf("holding stream_event: %d", code)
	}
	events := ctl.events("?hold=reply")

	sm.AddChannel(slack.Channel{ID: "C0EVAL0001", Name: "eval"})
	sm.AddMessage("C0EVAL0001", slack.Message{TS: "1790000000.000100", User: "U0ALICE001", Text: "did it ship?"})
	answered := make(chan time.Time, 1)
	go func() {
		r, err := hc.PostForm(up.URL+"/api/chat.postMessage", map[string][]string{"token": {"xoxb-1"}, "channel": {"C0EVAL0001"}, "thread_ts": {"1790000000.000100"}, "text": {"Done: it shipped."}})
		if err == nil {
			r.Body.Close()
		}
		answered <- time.Now()
	}()
	var reply proxy.Event
	for ev := range events {
		if ev.Type == proxy.EventReply {
			reply = ev
			break
		}
	}
	if !reply.Held || reply.Text != "Done: it shipped." || reply.Channel != "C0EVAL0001" || reply.Thread != "1790000000.000100" || reply.Route != "slack" {
		t.Fatalf("reply %+v", reply)
	}
	select {
	case <-answered:
		t.Fatal("the agent had Slack's answer before the release")
	case <-time.After(150 * time.Millisecond):
	}
	release := func(id int64) int {
		code, _ := ctl.do("POST", fmt.Sprintf("/v1/events/%d/release", id), "")
		return code
	}
	if code := release(reply.ID); code != http.StatusNoContent {
		t.Fatalf("release: %d", code)
	}
	select {
	case <-answered:
	case <-time.After(3 * time.Second):
		t.Fatal("the release did not let the answer through")
	}
	if code := release(reply.ID); code != http.StatusNotFound {
		t.Fatalf("second release: %d", code)
	}
	if len(sm.Messages("C0EVAL0001")) != 2 {
		t.Fatalf("the mock does not have the reply: %+v %v", sm.Calls(""), sm.Messages("C0EVAL0001"))
	}
}

// flushHook is a ResponseWriter that calls a hook at each flush.
type flushHook struct {
	*httptest.ResponseRecorder
	flushes int
	hook    func(n int)
}

func (f *flushHook) Flush() {
	f.flushes++
	f.hook(f.flushes)
}

func TestEventStreamIsSubscribedBeforeItOpens(t *testing.T) {
	// An event made the moment the stream's opening line is out, as a
	// client that starts its request on seeing it makes one, is streamed.
	up := echo(t)
	p, hc := front(t, up, proxy.ModePassthrough, t.TempDir())
	streamed := make(chan struct{})
	w := &flushHook{ResponseRecorder: httptest.NewRecorder(), hook: func(n int) {
		switch n {
		case 1: // the opening line
			post(t, hc, up.URL+"/v1/opened", "{}")
		case 2: // the first event
			close(streamed)
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequest("GET", "/v1/events", nil).WithContext(ctx)
	done := make(chan struct{})
	go func() {
		(&api{p: p}).streamEvents(w, req)
		close(done)
	}()
	select {
	case <-streamed:
	case <-time.After(5 * time.Second):
		t.Fatal("the event made when the stream opened was never streamed")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream did not end when its request did")
	}
	if !strings.Contains(w.Body.String(), "event: request") {
		t.Fatalf("stream: %q", w.Body.String())
	}
}
