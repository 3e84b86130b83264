package fixtureservice_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/app"
)

func spec(name string) map[string]any {
	return map[string]any{"name": name, "app": referenceAgent(), "scriptedModel": true}
}

// A client runs, continues and forks a web conversation of the reference
// agent, run as a process, through the service, as a Go test would.
func TestRunContinueAndForkThroughTheService(t *testing.T) {
	s := newService(t)
	id := s.create(spec(t.Name()))
	s.script(id, router, routed(), routed(), routed())
	s.script(id, titler, text("Deploy question"))
	s.script(id, loop, text("Deploy 42 went out at 14:02."), text("Nothing since."), text("Forked: still 14:02."))
	first := s.result(id, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "Did deploy 42 go out?"}})
	if texts(first) != "Deploy 42 went out at 14:02." || len(first.Turns) != 1 || first.Turns[0].Status != "succeeded" {
		t.Fatalf("run: %+v", first)
	}
	next := s.result(id, "continue", map[string]any{"conversationId": first.ID, "input": map[string]any{"kind": "webMessage", "text": "Anything since?"}})
	if next.ID != first.ID || texts(next) != "Nothing since." {
		t.Fatalf("continue: %+v", next)
	}
	fork := s.result(id, "fork", map[string]any{"conversationId": first.ID, "at": map[string]any{"messageId": first.Replies[0].MessageID}})
	if fork.ID == first.ID || fork.ID == "" {
		t.Fatalf("fork: %+v", fork)
	}
	after := s.result(id, "continue", map[string]any{"conversationId": fork.ID, "input": map[string]any{"kind": "webMessage", "text": "And now?"}})
	if texts(after) != "Forked: still 14:02." || !strings.Contains(after.Earlier, "Deploy 42 went out at 14:02.") || strings.Contains(after.Earlier, "Nothing since.") {
		t.Fatalf("the fork's continue: %+v", after)
	}
}

// History loaded from a recorded file, judged by a rubric, and a fork at
// a built reply the client loaded: the items travel as JSON and the Go
// fixture matches them.
func TestHistoryCriteriaAndAForkAtALoadedReply(t *testing.T) {
	s := newService(t)
	id := s.create(spec(t.Name()))
	s.script(id, router, routed(), routed())
	s.script(id, loop, text("We ship on March 12, and Priya owns it."), text("Still March 12."))
	s.script(id, map[string]any{"name": "judge", "systemPrefix": "You are a strict evaluator"},
		map[string]any{"output": map[string]string{"answer": "A", "rationale": "recalls the date and the owner"}})
	rec := s.result(id, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "When do we ship, and who owns it?"},
		"history":  []map[string]any{{"kind": "recorded", "path": "../history/testdata/launch-planning.json"}},
		"criteria": map[string]any{"pass": []string{"says March 12", "names Priya"}, "fail": []string{"gives another date"}}})
	if len(rec.Scores) != 1 || rec.Scores[0].Verdict.Answer != "A" || !strings.Contains(rec.Earlier, "Help me plan the Orbit launch") {
		t.Fatalf("recall: %+v", rec)
	}
	reply := map[string]any{"kind": "reply", "text": "March 12.", "tools": []map[string]any{{"name": "search", "input": map[string]any{"q": "launch"}, "result": "March 12"}}}
	built := s.result(id, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "Confirm the date?"},
		"history": []map[string]any{{"kind": "webMessage", "text": "When is the launch?"}, reply, {"kind": "webMessage", "text": "Who owns it?"}, {"kind": "reply", "text": "Priya."}}})
	if texts(built) != "Still March 12." {
		t.Fatalf("built: %+v", built)
	}
	fork := s.result(id, "fork", map[string]any{"conversationId": built.ID, "at": reply})
	if fork.ID == built.ID {
		t.Fatalf("fork: %+v", fork)
	}
	// An input is no fork point: the Go fixture says so, and the call
	// fails with its words.
	l, _ := s.call(id, "fork", map[string]any{"conversationId": built.ID, "at": map[string]any{"kind": "webMessage", "text": "Who owns it?"}}, nil)
	if l.Result != nil || !strings.Contains(l.Error, "that is an input") {
		t.Fatalf("a fork at an input: %+v", l)
	}
}

// The contract's stop example through the service: the agent's model
// request waits at the proxy until the client acknowledges its progress
// event, and a stop the client sends meanwhile cancels the turn.
func TestProgressWaitsForTheClientWhichSendsAStop(t *testing.T) {
	s := newService(t)
	id := s.create(spec(t.Name()))
	s.script(id, router, routed())
	s.script(id, titler, text("A long report"))
	s.script(id, loop, text("Here is the report."))
	var sent atomic.Bool
	var types []string
	l, _ := s.call(id, "run", map[string]any{"input": map[string]any{"kind": "slackMention", "text": "write me a long report"}, "progress": true},
		func(call string, p map[string]any) {
			types = append(types, p["type"].(string))
			n := int(p["id"].(float64))
			if p["type"] == "model_request" && p["purpose"] == "agent" && !sent.Swap(true) {
				s.must(http.StatusNoContent, "POST", "/v1/calls/"+call+"/send", map[string]any{"input": map[string]any{"kind": "slackThreadMessage", "text": "stop"}}, nil)
			}
			s.must(http.StatusNoContent, "POST", "/v1/calls/"+call+"/progress/"+strconv.Itoa(n), map[string]any{}, nil)
		})
	if l.Result == nil || len(l.Result.Turns) != 1 || l.Result.Turns[0].Outcome != "cancelled" || texts(l.Result) != "OK, I'll stay out of this thread." {
		t.Fatalf("the call: %+v (progress %v)", l, types)
	}
	// The held request may still reach the model as the agent gives up:
	// its answer need not be used, and is dropped.
	s.must(http.StatusNoContent, "DELETE", "/v1/fixtures/"+id+"/control/v1/fakeai", nil, nil)
}

// A progress event the client never acknowledges holds the agent: the
// call fails at the idle timeout, saying what was open, and says it was
// a timeout.
func TestACallThatNeverGoesIdleFailsWithWhatWasOpen(t *testing.T) {
	s := newService(t)
	sp := spec(t.Name())
	sp["idleTimeoutMs"] = 1500
	id := s.create(sp)
	s.script(id, router, routed())
	s.script(id, titler, text("Held"))
	s.script(id, loop, text("never seen"))
	l, _ := s.call(id, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "hello"}, "progress": true},
		func(call string, p map[string]any) {
			if p["type"] == "model_request" && p["purpose"] == "agent" {
				return // never acknowledged
			}
			s.must(http.StatusNoContent, "POST", "/v1/calls/"+call+"/progress/"+strconv.Itoa(int(p["id"].(float64))), map[string]any{}, nil)
		})
	if l.Result != nil || !l.Timeout || !strings.Contains(l.Error, "not idle after 1.5s") || !strings.Contains(l.Error, "in flight at the proxy: POST https://") {
		t.Fatalf("the call: %+v", l)
	}
	// The fixture failed: its end answers with the app's output.
	var ended struct{ Failures, Logs []string }
	s.must(http.StatusOK, "DELETE", "/v1/fixtures/"+id, nil, &ended)
	if len(ended.Logs) == 0 || !strings.Contains(ended.Logs[0], "fixture: examples/agent printed:") {
		t.Fatalf("the end: %+v", ended)
	}
}

// An app the client starts itself is attached: the service hands the
// environment it must run with, and the client answers with its URL. An
// idle callback at an absolute URL is asked as the app's idle route.
func TestAnAttachedAppRunsWithTheEnvironmentItIsGiven(t *testing.T) {
	s := newService(t)
	a := referenceAgent()
	delete(a, "command")
	delete(a, "addrEnv")
	a["attach"] = true
	// The callback answers from the agent's own word, and counts.
	var asked atomic.Int64
	var agentURL atomic.Value
	idle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.Header.Get("Authorization") != "Bearer test-admin-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		req, _ := http.NewRequest("GET", agentURL.Load().(string)+"/api/internal/idle", nil)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		var body json.RawMessage
		json.NewDecoder(resp.Body).Decode(&body)
		w.Write(body)
	}))
	t.Cleanup(idle.Close)
	a["routes"].(map[string]string)["idle"] = idle.URL + "/idle"
	var st started
	s.must(http.StatusCreated, "POST", "/v1/fixtures", map[string]any{"name": t.Name(), "app": a, "scriptedModel": true}, &st)
	if st.Start == nil || st.AppURL != "" {
		t.Fatalf("create: %+v", st)
	}
	for _, k := range []string{"DATABASE_URL", "HTTPS_PROXY", "SSL_CERT_FILE", "AGENT_ADMIN_SECRET"} {
		if st.Start.Env[k] == "" {
			t.Fatalf("the environment lacks %s: %v", k, st.Start.Env)
		}
	}
	// Before it is attached, the fixture takes no call.
	if status, raw := s.do("POST", "/v1/fixtures/"+st.ID+"/run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "x"}}); status != http.StatusConflict {
		t.Fatalf("a run before the attach: %d %s", status, raw)
	}
	cfg, err := app.FromEnv(func(k string) string { return st.Start.Env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ag, err := app.New(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ag.Handler())
	t.Cleanup(func() { srv.Close(); ag.Close() })
	agentURL.Store(srv.URL)
	var attached started
	s.must(http.StatusOK, "POST", "/v1/starts/"+st.Start.ID, map[string]any{"url": srv.URL}, &attached)
	if attached.AppURL != srv.URL {
		t.Fatalf("attach: %+v", attached)
	}
	t.Cleanup(func() { s.deleteClean(st.ID) })
	s.script(st.ID, router, routed())
	s.script(st.ID, titler, text("Hi"))
	s.script(st.ID, loop, text("Hello from in-process."))
	c := s.result(st.ID, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "hello"}})
	if texts(c) != "Hello from in-process." || asked.Load() == 0 {
		t.Fatalf("run: %+v (the idle callback was asked %d times)", c, asked.Load())
	}
}

// Bad requests are answered 400 or 422, naming what is wrong, and leave
// nothing behind.
func TestBadRequestsSayWhatIsWrong(t *testing.T) {
	s := newService(t)
	withApp := func(edit func(a map[string]any)) map[string]any {
		a := referenceAgent()
		edit(a)
		return map[string]any{"name": "bad", "app": a}
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		says   string
	}{
		{"no name", map[string]any{"app": referenceAgent()}, 400, "name: the test's name"},
		{"unknown field", map[string]any{"name": "x", "app": referenceAgent(), "scripted": true}, 400, `unknown field "scripted"`},
		{"no command", withApp(func(a map[string]any) { delete(a, "command") }), 400, "give the command that starts it, or attach"},
		{"unknown option", withApp(func(a map[string]any) { a["options"] = map[string]any{"turnTimout": "X"} }), 400, `no agent option is named "turnTimout"`},
		{"bad preset", withApp(func(a map[string]any) { a["routes"] = map[string]string{"preset": "rails"} }), 400, "the one preset is junior"},
		{"an option the app does not take", map[string]any{"name": "x", "app": referenceAgent(), "agent": map[string]any{"slackCrossActorSteering": "queue"}}, 422,
			"does not take the agent option SlackCrossActorSteering"},
		{"a command that does not start", withApp(func(a map[string]any) { a["command"] = []string{"/nonexistent/agent"} }), 422, "start examples/agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := s.do("POST", "/v1/fixtures", tc.body)
			var e struct{ Error string }
			json.Unmarshal(raw, &e)
			if status != tc.status || !strings.Contains(e.Error, tc.says) {
				t.Fatalf("%d %s; want %d saying %q", status, raw, tc.status, tc.says)
			}
		})
	}
	id := s.create(spec(t.Name()))
	for _, tc := range []struct {
		op   string
		body map[string]any
		says string
	}{
		{"run", map[string]any{"input": map[string]any{"kind": "slackMentoin", "text": "x"}}, `input kind "slackMentoin"`},
		{"run", map[string]any{}, "input: the input to send"},
		{"continue", map[string]any{"conversationId": "nope", "input": map[string]any{"kind": "webMessage"}}, `no conversation "nope"`},
		{"run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": "x"}, "history": []map[string]any{{"kind": "recorded"}}}, "needs the path"},
	} {
		status, raw := s.do("POST", "/v1/fixtures/"+id+"/"+tc.op, tc.body)
		var e struct{ Error string }
		json.Unmarshal(raw, &e)
		if status/100 != 4 || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s %v: %d %s; want it to say %q", tc.op, tc.body, status, raw, tc.says)
		}
	}
}

// The service answers loopback callers that hold its token, asking for a
// loopback host: a page that rebinds a name to loopback is refused.
func TestOnlyTheTokenOnLoopbackIsServed(t *testing.T) {
	s := newService(t)
	for _, tc := range []struct {
		name, token, host string
		status            int
	}{
		{"no token", "", "", http.StatusUnauthorized},
		{"wrong token", "wrong", "", http.StatusUnauthorized},
		{"a rebound name", token, "evil.example:80", http.StatusForbidden},
		{"the token", token, "", http.StatusOK},
		{"localhost", token, "localhost", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", s.url+"/v1/openapi.json", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("%d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
}

// Four clients at once, each with its own fixture on one service, each
// running calls: every one gets its own replies, and none fails.
func TestManyClientsAtOnceDoNotMeet(t *testing.T) {
	s := newService(t)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 4 {
		wg.Go(func() {
			id := s.create(spec(t.Name() + "/" + strconv.Itoa(i)))
			for n := range 3 {
				s.script(id, router, routed())
				s.script(id, titler, text("Worker"))
				want := "client " + strconv.Itoa(i) + " call " + strconv.Itoa(n)
				s.script(id, loop, text(want))
				l, _ := s.call(id, "run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": want + "?"}}, nil)
				if l.Result == nil || texts(l.Result) != want || len(l.Failures) > 0 {
					errs <- want + ": " + jsonOf(l)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }
