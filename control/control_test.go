package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/anthropics/anthropic-sdk-go/v2"
)

// anthropicParams is a one-message Anthropic request.
func anthropicParams(text string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-fake", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}}
}

// ask sends one Anthropic request through hc.
func ask(hc *http.Client, ctx context.Context, params anthropic.MessageNewParams) (*anthropic.Message, error) {
	client := anthropicClient(hc, "https://api.anthropic.com")
	return client.Messages.New(ctx, params)
}

// sseEvents reads a stream of progress events into a channel, closed at
// the stream's end; opened is closed once the stream's opening line is
// read, when its subscription is in place.
func sseEvents(body io.Reader) (events chan proxy.Event, opened chan struct{}) {
	events, opened = make(chan proxy.Event, 1000), make(chan struct{})
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			if sc.Text() == ": agentvcr events" {
				close(opened)
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev proxy.Event
				json.Unmarshal([]byte(data), &ev)
				events <- ev
			}
		}
	}()
	return events, opened
}

// events opens the event stream with query (?hold=...), closed when the
// test ends, and returns its events once its subscription is in place.
func (c *control) events(query string) <-chan proxy.Event {
	c.t.Helper()
	resp := c.open(c.token, "GET", "/v1/events"+query, "")
	c.t.Cleanup(func() { resp.Body.Close() })
	events, opened := sseEvents(resp.Body)
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		c.t.Fatal("the event stream did not open")
	}
	return events
}

// next returns the next event of type typ, or fails the test after 10 s.
func next(t *testing.T, events <-chan proxy.Event, typ proxy.EventType) proxy.Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the event stream ended before a %s event", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event within 10 s", typ)
		}
	}
}

// TestControlAPIAnswersAsDocumented calls every operation of the control
// API, with the agent doing what fills its answers (Slack calls, a tool
// loop, embeddings, images, a fault, a replay miss), and checks every
// answer and every progress event against the OpenAPI document (the
// control client does, see checkedTransport); then that every operation
// was called and every event type seen.
func TestControlAPIAnswersAsDocumented(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	defer upstream.Close()
	dir := t.TempDir()
	rules := []proxy.Rule{
		{Name: "up", URLPrefix: upstream.URL + "/"},
		{Name: "anthropic", URLPrefix: "https://api.anthropic.com/", Mode: proxy.ModeFake},
		{Name: "openai", URLPrefix: "https://api.openai.com/", Mode: proxy.ModeFake},
		{Name: "slack", URLPrefix: "https://slack.com/api/", Mode: proxy.ModeMock},
	}
	allow := []string{upstream.URL, "https://api.anthropic.com", "https://api.openai.com", "https://slack.com"}
	rec, hc := frontWith(t, upstream, func(p *proxy.Proxy) { p.Mode, p.Dir, p.Rules, p.Allow = proxy.ModeRecord, dir, rules, allow })
	if resp, err := hc.Get(upstream.URL + "/recorded"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("record: %v", err)
	} else {
		resp.Body.Close()
	}
	// The agent may have the whole body before the proxy has read its
	// end, which records it.
	for deadline := time.Now().Add(10 * time.Second); rec.Stats().Recorded != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d after 10 s; want 1", rec.Stats().Recorded)
		}
	}
	p, hc := restart(t, upstream, rec, func(p *proxy.Proxy) { p.Mode = proxy.ModeReplay })
	ctl := newControl(t, p, "tok")
	expect := func(want int, method, path, body string) string {
		t.Helper()
		code, got := ctl.do(method, path, body)
		if code != want {
			t.Fatalf("%s %s: %d %s; want %d", method, path, code, got, want)
		}
		return got
	}

	if got := expect(200, "GET", "/v1/openapi.json", ""); got != string(openAPI) {
		t.Fatal("GET /v1/openapi.json is not control/openapi.json")
	}
	// Before anything happened, every list is empty: [], never null.
	for _, path := range []string{"/v1/misses", "/v1/faults", "/v1/inflight", "/v1/slack/calls", "/v1/slack/channels/CNOSUCH/messages",
		"/v1/fakeai/calls", "/v1/fakeai/embeddings", "/v1/fakeai/images"} {
		if got := expect(200, "GET", path, ""); strings.Contains(got, "null") {
			t.Errorf("GET %s: %s", path, got)
		}
	}
	if got := expect(200, "POST", "/v1/slack/seed", `{}`); strings.TrimSpace(got) != `{"messages":[]}` {
		t.Errorf("seeding nothing: %s", got)
	}

	events := ctl.events("?hold=reply&holdTimeoutMs=20000")
	// Every event read is counted in seen, those the test waits for too.
	seen := map[proxy.EventType]bool{}
	counted := func(ev proxy.Event) proxy.Event { seen[ev.Type] = true; return ev }
	expect(400, "POST", "/v1/scopes", `{}`)
	expect(204, "POST", "/v1/scopes", `{"name":"documented"}`)
	expect(409, "POST", "/v1/scopes", `{"name":"another"}`)

	// Slack: seeded, an error queued, a reply held and released, a
	// method the mock does not know.
	expect(400, "POST", "/v1/slack/seed", `{"users":"alice"}`)
	expect(200, "POST", "/v1/slack/seed", `{"users":[{"id":"U0ALICE001","name":"alice","real_name":"Alice"}],
		"channels":[{"id":"C0EVAL0001","name":"eval"}],"messages":[{"channel":"C0EVAL0001","user":"U0ALICE001","text":"did it ship?"}],
		"subscribe":[{"channel":"C0EVAL0001","thread_ts":"1790000000.000100"}]}`)
	expect(400, "POST", "/v1/slack/errors", `{"method":"chat.delete"}`)
	expect(204, "POST", "/v1/slack/errors", `{"method":"chat.delete","error":"message_not_found"}`)
	slackCall := func(method string, form url.Values) int {
		form.Set("token", "xoxb-test")
		resp, err := hc.PostForm("https://slack.com/api/"+method, form)
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	answered := make(chan int, 1)
	go func() {
		answered <- slackCall("chat.postMessage", url.Values{"channel": {"C0EVAL0001"}, "text": {"It shipped."}})
	}()
	reply := counted(next(t, events, proxy.EventReply))
	var open struct {
		Count    int
		Requests []proxy.Flight
	}
	json.Unmarshal([]byte(expect(200, "GET", "/v1/inflight", "")), &open)
	if open.Count != 1 || open.Requests[0].Request != reply.Request || open.Requests[0].Route != "slack" || open.Requests[0].Mode != proxy.ModeMock {
		t.Errorf("in flight while a reply is held: %+v; want its request %d", open, reply.Request)
	}
	expect(204, "POST", fmt.Sprintf("/v1/events/%d/release", reply.ID), "")
	expect(404, "POST", fmt.Sprintf("/v1/events/%d/release", reply.ID), "")
	select {
	case code := <-answered:
		if code != http.StatusOK {
			t.Fatalf("chat.postMessage: %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chat.postMessage had no answer within 10 s of its release")
	}
	slackCall("chat.delete", url.Values{"channel": {"C0EVAL0001"}, "ts": {"1"}})
	slackCall("chat.fly", url.Values{})
	expect(200, "GET", "/v1/slack/calls?method=chat.postMessage", "")
	expect(200, "GET", "/v1/slack/channels/C0EVAL0001/messages", "")

	// The scripted model: a tool loop, a rejection, embeddings, images.
	expect(400, "POST", "/v1/fakeai/respond", `{"agent":{"name":"support"},"responses":[]}`)
	expect(204, "POST", "/v1/fakeai/respond", `{"agent":{"name":"support","tools":["lookup"]},
		"responses":[{"toolCalls":[{"name":"lookup","input":{"q":"deploy"}}],"then":{"text":"It went out at 14:02.","usage":{"input":10,"output":5}}}]}`)
	if got := toolLoop(t, hc, func([]byte) string { return `{"status":"deployed"}` }); got != "It went out at 14:02." {
		t.Fatalf("tool loop: %q", got)
	}
	expect(200, "GET", "/v1/fakeai/calls?agent=support", "")
	expect(400, "POST", "/v1/faults", `{"kind":"explode"}`)
	expect(201, "POST", "/v1/faults", `{"kind":"reject_model_request","route":"anthropic","times":1}`)
	expect(201, "POST", "/v1/faults", `{"kind":"latency","route":"nothing","delayMs":1,"times":-1}`)
	expect(200, "GET", "/v1/faults", "")
	if _, err := ask(hc, context.Background(), anthropicParams("rejected")); err == nil {
		t.Fatal("the rejection fault did not reject")
	}
	expect(204, "DELETE", "/v1/faults", "")
	expect(400, "POST", "/v1/fakeai/embeddings", `{"vectors":"none"}`)
	expect(204, "POST", "/v1/fakeai/embeddings", `{"vectors":[[0.25,0.5]]}`)
	post := func(u, body string) {
		resp, err := hc.Post(u, "application/json", strings.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %v %v", u, err, resp)
		}
		resp.Body.Close()
	}
	post("https://api.openai.com/v1/embeddings", `{"model":"text-embedding-3-small","input":["deploys"]}`)
	expect(200, "GET", "/v1/fakeai/embeddings", "")
	expect(400, "POST", "/v1/fakeai/images", `{"images":[1]}`)
	expect(204, "POST", "/v1/fakeai/images", `{"images":["iVBORw0KGgo="]}`)
	post("https://api.openai.com/v1/images/generations", `{"model":"gpt-image-1","prompt":"a ship","n":1}`)
	expect(200, "GET", "/v1/fakeai/images", "")
	expect(200, "GET", "/v1/fakeai/calls", "")

	// A replay miss, with its nearest recording.
	if resp, err := hc.Get(upstream.URL + "/unrecorded"); err != nil || resp.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("a miss: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if got := expect(200, "GET", "/v1/misses", ""); !strings.Contains(got, `"nearestUrl"`) {
		t.Errorf("the miss has no nearest recording: %s", got)
	}
	expect(200, "GET", "/v1/stats", "")

	// The scope fails on chat.fly, whatever the test says: 422, with
	// every list there.
	expect(409, "DELETE", "/v1/fakeai", "")
	expect(400, "POST", "/v1/scopes/documented/end", `{}`)
	failed := expect(422, "POST", "/v1/scopes/documented/end", `{"passed":true}`)
	if !strings.Contains(failed, `"unknownSlack":["chat.fly"]`) || !strings.Contains(failed, `"unused":[]`) || strings.Contains(failed, "null") {
		t.Errorf("the failed scope: %s", failed)
	}
	expect(409, "POST", "/v1/scopes/documented/end", `{"passed":true}`)
	expect(204, "DELETE", "/v1/fakeai", "")
	expect(204, "POST", "/v1/scopes", `{"name":"passing"}`)
	expect(200, "POST", "/v1/scopes/passing/end", `{"passed":true}`)
	expect(400, "GET", "/v1/events?hold=stream_event", "")
	expect(400, "GET", "/v1/events?holdTimeoutMs=0", "")

	types := []proxy.EventType{proxy.EventRequest, proxy.EventModelRequest, proxy.EventResponse, proxy.EventReply, proxy.EventStream, proxy.EventToolRequest, proxy.EventDone, proxy.EventError}
	all := func() bool { return !slices.ContainsFunc(types, func(typ proxy.EventType) bool { return !seen[typ] }) }
	for deadline := time.After(10 * time.Second); !all(); {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			counted(ev)
		case <-deadline:
			t.Fatalf("not every event type came within 10 s, so the document's shapes of some went unchecked: saw %v of %v", seen, types)
		}
	}
	for _, op := range ctl.checked.doc.ops {
		called := false
		for status := range op.answers {
			var code int
			fmt.Sscan(status, &code)
			called = called || ctl.checked.seen(op.key(), code)
		}
		if !called {
			t.Errorf("%s was not called: its answer went unchecked", op.key())
		}
	}
}

// The lists the control API answers are [] when empty, never null: the
// cases a Node client hit, each alone.
func TestControlListsAreNeverNull(t *testing.T) {
	p, _ := fakeProxy(t, nil)
	ctl := newControl(t, p, "tok")
	for _, tt := range []struct {
		method, path, body string
		want               []string
	}{
		{"POST", "/v1/slack/seed", `{"users":[{"id":"U1"}]}`, []string{`"messages":[]`}},
		{"GET", "/v1/slack/channels/CNOSUCH/messages", "", []string{`[]`}},
		{"GET", "/v1/slack/calls?method=chat.postMessage", "", []string{`"calls":[]`, `"unknown":[]`}},
		{"GET", "/v1/misses", "", []string{`[]`}},
		{"GET", "/v1/inflight", "", []string{`"requests":[]`}},
		{"GET", "/v1/fakeai/embeddings", "", []string{`[]`}},
		{"GET", "/v1/fakeai/images", "", []string{`[]`}},
		{"GET", "/v1/fakeai/calls?agent=nobody", "", []string{`"calls":[]`, `"failures":[]`}},
	} {
		_, body := ctl.do(tt.method, tt.path, tt.body)
		for _, w := range tt.want {
			if !strings.Contains(body, w) || strings.Contains(body, "null") {
				t.Errorf("%s %s: %s; want %s and no null", tt.method, tt.path, body, w)
			}
		}
	}
	// A scope that ends with a scripted answer left unused: only
	// "unused" has something, and the other lists are [].
	ctl.do("POST", "/v1/fakeai/respond", `{"agent":{"name":"idle"},"responses":[{"text":"never asked"}]}`)
	ctl.do("POST", "/v1/scopes", `{"name":"early stop"}`)
	code, body := ctl.do("POST", "/v1/scopes/early%20stop/end", `{"passed":true}`)
	if code != http.StatusUnprocessableEntity || strings.Contains(body, "null") || !strings.Contains(body, `"unknownSlack":[]`) || !strings.Contains(body, `"unscripted":[]`) {
		t.Errorf("a scope with an unused script: %d %s", code, body)
	}
}

// GET /v1/inflight lists what is open at the proxy, with the numbers the
// progress events carry, and empties when the agent is quiet: the check
// a test in any language waits on.
func TestInFlightListsWhatIsOpen(t *testing.T) {
	p, hc := fakeProxy(t, nil)
	ctl := newControl(t, p, "tok")
	ctl.do("POST", "/v1/fakeai/respond", `{"agent":{"name":"a"},"responses":[{"text":"hello"}]}`)
	events := ctl.events("?hold=model_request")
	done := make(chan error, 1)
	go func() {
		_, err := ask(hc, context.Background(), anthropicParams("hi"))
		done <- err
	}()
	held := next(t, events, proxy.EventModelRequest)
	var open struct {
		Count    int
		Requests []proxy.Flight
	}
	_, body := ctl.do("GET", "/v1/inflight", "")
	json.Unmarshal([]byte(body), &open)
	if open.Count != 1 || len(open.Requests) != 1 {
		t.Fatalf("in flight while a model request is held: %s", body)
	}
	fl := open.Requests[0]
	if fl.Request != held.Request || fl.Method != "POST" || fl.URL != "https://api.anthropic.com/v1/messages" || fl.Route != "anthropic" || fl.Mode != proxy.ModeFake ||
		fl.ElapsedMs < 0 || time.Since(fl.Started) < 0 {
		t.Fatalf("the open request: %+v; its model_request: %+v", fl, held)
	}
	ctl.do("POST", fmt.Sprintf("/v1/events/%d/release", held.ID), "")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the model request had no answer within 10 s of its release")
	}
	// The agent has its answer; the proxy may still be closing the
	// exchange for a moment.
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, body = ctl.do("GET", "/v1/inflight", "")
		if strings.TrimSpace(body) == `{"count":0,"requests":[]}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still in flight 10 s after the answer: %s", body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := p.InFlight(); len(got) != 0 {
		t.Fatalf("Proxy.InFlight: %+v", got)
	}
}

// A subscriber sets the hold limit of its own holds (?holdTimeoutMs=):
// a hold that outlasts it fails its request, and says after how long.
func TestHoldLimitPerSubscription(t *testing.T) {
	p, hc := fakeProxy(t, nil)
	ctl := newControl(t, p, "tok")
	ctl.do("POST", "/v1/fakeai/respond", `{"agent":{"name":"a"},"responses":[{"text":"hello"}]}`)
	events := ctl.events("?hold=model_request&holdTimeoutMs=300")
	start := time.Now()
	_, err := ask(hc, context.Background(), anthropicParams("hi"))
	if err == nil || !strings.Contains(err.Error(), "expired after 300ms") {
		t.Fatalf("a hold never released: %v; want it to expire after 300ms", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("the hold expired after %v, before its limit", took)
	}
	if !next(t, events, proxy.EventModelRequest).Held {
		t.Fatal("the model request was not held")
	}
	for _, q := range []string{"holdTimeoutMs=0", "holdTimeoutMs=-5", "holdTimeoutMs=3600001", "holdTimeoutMs=1s"} {
		if code, body := ctl.do("GET", "/v1/events?hold=model_request&"+q, ""); code != http.StatusBadRequest || !strings.Contains(body, docEvents) {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}
}

// An error about a call's form names the section of docs/proxy.md that
// describes the call, and the section is there.
func TestControlErrorsNameTheManual(t *testing.T) {
	readme, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(readme), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	for _, doc := range []string{docControl, docEvents, docFaults, docFake} {
		if !anchors[strings.TrimPrefix(doc, "docs/proxy.md#")] {
			t.Errorf("%s: docs/proxy.md has no such section", doc)
		}
	}
	p, _ := fakeProxy(t, nil)
	ctl := newControl(t, p, "tok")
	for _, tt := range []struct{ method, path, body, doc string }{
		{"GET", "/v1/nope", "", docControl},
		{"DELETE", "/v1/stats", "", docControl},
		{"POST", "/v1/scopes", `{"nom":"x"}`, docControl},
		{"POST", "/v1/scopes/x/end", `[]`, docControl},
		{"POST", "/v1/slack/seed", `{"users":{}}`, docControl},
		{"POST", "/v1/slack/errors", `{"method":"chat.postMessage","eror":"x"}`, docControl},
		{"POST", "/v1/faults", `{"kind":"explode"}`, docFaults},
		{"POST", "/v1/faults", `nonsense`, docFaults},
		{"GET", "/v1/events?hold=done", "", docEvents},
		{"POST", "/v1/fakeai/respond", `{"agent":{}}`, docFake},
		{"POST", "/v1/fakeai/embeddings", `{"vectors":1}`, docFake},
	} {
		code, body := ctl.do(tt.method, tt.path, tt.body)
		if code/100 != 4 || !strings.Contains(body, "see "+tt.doc) || strings.Contains(body, "go doc") {
			t.Errorf("%s %s %s: %d %s; want an error that says see %s", tt.method, tt.path, tt.body, code, body, tt.doc)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces
// as hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchor(heading string) string {
	var b bytes.Buffer
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The manual's table of the control API lists every route the router
// serves, and none it does not.
func TestManualListsEveryRoute(t *testing.T) {
	readme, err := os.ReadFile("../docs/proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Control API\n")
	if !ok {
		t.Fatal("docs/proxy.md has no Control API section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z]+) (/[^`? ]+)").FindAllStringSubmatch(section, -1) {
		listed[m[1]+" "+m[2]] = true
	}
	for _, pattern := range (&api{}).routes().patterns {
		if !listed[pattern] {
			t.Errorf("docs/proxy.md's Control API table does not list %s", pattern)
		}
		delete(listed, pattern)
	}
	for r := range listed {
		t.Errorf("docs/proxy.md's Control API table lists %s, which the control API does not serve", r)
	}
}
