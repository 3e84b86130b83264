package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentvcr/agentvcr/proxy/slack"
)

// recorder keeps the events a subscription got.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) handle(_ context.Context, ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// wait returns the events once one of type t has come.
func (r *recorder) wait(t *testing.T, typ EventType) []Event {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		evs := append([]Event(nil), r.events...)
		r.mu.Unlock()
		for _, e := range evs {
			if e.Type == typ {
				return evs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event; got %s", typ, types(evs))
		}
	}
}

// types lists the events' types, text pieces left out.
func types(evs []Event) string {
	var s []string
	for _, e := range evs {
		if e.Type != EventStream {
			s = append(s, string(e.Type))
		}
	}
	return strings.Join(s, ",")
}

const fetchArgs = `{"url":"https://example.com"}`

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// sdkCall runs one streamed model call with a real SDK through hc and
// returns the tool call it got, as name and arguments.
type sdkCall func(t *testing.T, hc *http.Client, base string) (name, args string)

var sdkCalls = map[string]sdkCall{
	"anthropic": func(t *testing.T, hc *http.Client, base string) (string, string) {
		client := anthropicClient(hc, base)
		stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
			Model: "claude-test", MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("fetch example.com"))},
			Tools:    []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{}, "webFetch")},
		})
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		return msg.Content[0].Name, string(msg.Content[0].Input)
	},
	"openai-chat": func(t *testing.T, hc *http.Client, base string) (string, string) {
		client := openaiClient(hc, base, 0)
		stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model:    "gpt-test",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("fetch example.com")},
			Tools:    []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "webFetch"})},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		c := acc.Choices[0].Message.ToolCalls[0]
		return c.Function.Name, c.Function.Arguments
	},
	"openai-responses": func(t *testing.T, hc *http.Client, base string) (string, string) {
		client := openaiClient(hc, base, 0)
		stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
			Model: "gpt-test",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("fetch example.com")},
			Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("webFetch", map[string]any{"type": "object"}, false)},
		})
		var name, args string
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.output_item.done" {
				name, args = ev.Item.Name, ev.Item.Arguments.OfString
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		return name, args
	},
}

func TestProgressPerDialect(t *testing.T) {
	for dialect, call := range sdkCalls {
		t.Run(dialect, func(t *testing.T) {
			var hits atomic.Int64
			up := providers(&hits)
			defer up.Close()
			p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
			var rec recorder
			defer p.Subscribe(rec.handle)()
			name, args := call(t, hc, up.URL)
			if name != "webFetch" || !sameJSON([]byte(args), []byte(fetchArgs)) {
				t.Fatalf("the SDK got %s %s", name, args)
			}
			evs := rec.wait(t, EventDone)
			if got := types(evs); got != "request,model_request,response,tool_request,done" {
				t.Fatalf("events %s", got)
			}
			for _, e := range evs {
				if e.Request != evs[0].Request || e.Route != "model" {
					t.Fatalf("event of another request or route: %+v", e)
				}
				switch e.Type {
				case EventModelRequest:
					if e.Model == nil || !strings.HasSuffix(e.Model.Model, "-test") || e.Purpose != "agent" || len(e.Model.Tools) != 1 || !e.Model.Stream {
						t.Fatalf("model_request %+v %+v", e, e.Model)
					}
				case EventToolRequest:
					if e.Name != "webFetch" || !sameJSON(e.Args, []byte(fetchArgs)) {
						t.Fatalf("tool_request %s %s", e.Name, e.Args)
					}
				case EventDone:
					if e.Finish == nil || e.Finish.Reason == "" || e.Finish.OutputTokens == 0 {
						t.Fatalf("done %+v", e.Finish)
					}
				}
			}
			for i := 1; i < len(evs); i++ {
				if evs[i].ID <= evs[i-1].ID || evs[i].Time.Before(evs[i-1].Time) {
					t.Fatalf("events out of order: %+v then %+v", evs[i-1], evs[i])
				}
			}
		})
	}
}

// TestProgressOfTheAISDKGateway: the AI SDK gateway protocol names the
// model in a header and answers generateText with one JSON document.
func TestProgressOfTheAISDKGateway(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
	var rec recorder
	defer p.Subscribe(rec.handle)()
	req, _ := http.NewRequest("POST", up.URL+"/v3/ai/language-model", strings.NewReader(`{"prompt":[{"role":"user","content":[{"type":"text","text":"fetch"}]}],"tools":[{"type":"function","name":"webFetch","inputSchema":{}}]}`))
	req.Header.Set("ai-language-model-id", "anthropic/claude-sonnet-4")
	req.Header.Set("ai-language-model-streaming", "false")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	evs := rec.wait(t, EventDone)
	if got := types(evs); got != "request,model_request,response,tool_request,done" {
		t.Fatalf("events %s", got)
	}
	if m := evs[1].Model; m.Model != "anthropic/claude-sonnet-4" || m.Stream || evs[1].Purpose != "agent" {
		t.Fatalf("model_request %+v", m)
	}
	if !sameJSON(evs[3].Args, []byte(fetchArgs)) || evs[4].Finish.Reason != "tool-calls" || evs[4].Finish.InputTokens != 12 {
		t.Fatalf("tool_request %s, done %+v", evs[3].Args, evs[4].Finish)
	}
}

func TestToolRequestHoldDelaysTheToolCall(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
	var held atomic.Int64 // unix nanos when the tool_request came
	defer p.Subscribe(func(ctx context.Context, ev Event) {
		if ev.Type == EventToolRequest {
			held.Store(time.Now().UnixNano())
			select {
			case <-time.After(300 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	})()
	client := anthropicClient(hc, up.URL)
	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("fetch"))}})
	var got time.Time
	for stream.Next() {
		if stream.Current().Type == "content_block_stop" {
			got = time.Now()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if held.Load() == 0 || got.IsZero() {
		t.Fatal("no tool_request, or no tool call at the client")
	}
	if d := got.Sub(time.Unix(0, held.Load())); d < 300*time.Millisecond {
		t.Fatalf("the client had the tool call %v after the tool_request; want >= 300ms", d)
	}
}

func TestModelRequestHoldLetsTheTestActFirst(t *testing.T) {
	mock := slack.New()
	var seen atomic.Int64 // thread messages when the model request reached the upstream
	seen.Store(-1)
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(int64(len(mock.Messages("C0EVAL0001"))))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer up.Close()
	p, hc := frontWith(t, up, func(p *Proxy) {
		p.Mode, p.Rules, p.Slack = ModePassthrough, []Rule{{Name: "model", URLPrefix: up.URL + "/"}}, mock
	})
	defer p.Subscribe(func(ctx context.Context, ev Event) {
		if ev.Type == EventModelRequest {
			time.Sleep(50 * time.Millisecond)
			mock.AddMessage("C0EVAL0001", slack.Message{User: "U0ALICE001", Text: "stop"})
		}
	})()
	resp, err := hc.Post(up.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-test","max_tokens":10,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen.Load() != 1 {
		t.Fatalf("the upstream saw %d thread messages; want the one posted during the hold", seen.Load())
	}
}

func TestCancelledRequestReleasesItsHold(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
	released := make(chan error, 1)
	defer p.Subscribe(func(ctx context.Context, ev Event) {
		if ev.Type == EventModelRequest {
			<-ctx.Done()
			released <- context.Cause(ctx)
		}
	})()
	// The goroutines that run now, whatever they do, are not this
	// request's.
	before := goroutines()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", up.URL+"/v1/messages", strings.NewReader(`{"model":"claude-test"}`))
	if _, err := hc.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the client's deadline, got %v", err)
	}
	select {
	case err := <-released:
		if !errors.Is(err, errClientGone) {
			t.Fatalf("the hold ended with %v; want the client gone", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hold outlived the cancelled request")
	}
	hc.CloseIdleConnections()
	// Every goroutine the request started in the proxy ends.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []string
		for id, stack := range goroutines() {
			if _, old := before[id]; !old && strings.Contains(stack, "agentvcr/proxy.(*") {
				left = append(left, stack)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the proxy outlived the cancelled request by 5 s:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the held request reached the upstream (%d hits)", hits.Load())
	}
}

// goroutines returns the stack of each running goroutine, by its id,
// which no later goroutine reuses.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, stack := range strings.Split(string(buf), "\n\n") {
		if f := strings.Fields(stack); len(f) > 1 && f[0] == "goroutine" {
			out[f[1]] = stack
		}
	}
	return out
}

func TestHoldExpires(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := frontWith(t, up, func(p *Proxy) {
		p.Mode, p.Rules, p.HoldTimeout = ModePassthrough, []Rule{{Name: "model", URLPrefix: up.URL + "/"}}, 100*time.Millisecond
	})
	unsubscribe := p.Subscribe(func(ctx context.Context, ev Event) {
		if ev.Type == EventModelRequest {
			<-ctx.Done()
		}
	})
	resp, err := hc.Post(up.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-test"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(b), "hold on model_request") || !strings.Contains(string(b), "expired after 100ms") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if hits.Load() != 0 {
		t.Fatal("a request whose hold expired went upstream")
	}

	// A hold on the response side cuts the stream the agent reads.
	unsubscribe()
	var rec recorder
	defer p.Subscribe(func(ctx context.Context, ev Event) {
		rec.handle(ctx, ev)
		if ev.Type == EventToolRequest {
			<-ctx.Done()
		}
	})()
	_, err = anthropicStream(anthropicClient(hc, up.URL))
	if err == nil {
		t.Fatal("the stream held past its deadline ended without an error")
	}
	evs := rec.wait(t, EventError)
	if last := evs[len(evs)-1]; !strings.Contains(last.Error, "hold on tool_request") {
		t.Fatalf("last event %+v", last)
	}
}

// TestLoad runs 200 concurrent streamed model requests with a subscriber
// that holds every tool_request: none is lost, each request's events
// come in order, and memory comes back down.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	dir := t.TempDir()
	p, hc := frontWith(t, up, func(p *Proxy) {
		p.Mode, p.Dir, p.Rules = ModePassthrough, dir, []Rule{{Name: "model", URLPrefix: up.URL + "/"}}
		// 200 requests at once on a busy machine wait for their
		// headers longer than the 2 s a test's single request is given.
		p.Upstream.(*http.Transport).ResponseHeaderTimeout = time.Minute
	})
	hc.Transport.(*http.Transport).MaxIdleConnsPerHost = 200
	var mu sync.Mutex
	byRequest := map[int64][]EventType{}
	defer p.Subscribe(func(ctx context.Context, ev Event) {
		mu.Lock()
		byRequest[ev.Request] = append(byRequest[ev.Request], ev.Type)
		mu.Unlock()
		if ev.Type == EventToolRequest {
			sleep(ctx, 20*time.Millisecond)
		}
	})()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	const n = 200
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"model":"claude-test","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"request %d"}]}`, i)
			resp, err := hc.Post(up.URL+"/v1/messages", "application/json", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || !strings.HasSuffix(strings.TrimSpace(string(b)), `{"type":"message_stop"}`) {
				errs <- fmt.Errorf("request %d: %v, body ends %q", i, err, b[max(0, len(b)-40):])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		complete := 0
		for _, seq := range byRequest {
			if len(seq) > 0 && seq[len(seq)-1] == EventDone {
				complete++
			}
		}
		mu.Unlock()
		if complete == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d requests reported done", complete, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for req, seq := range byRequest {
		var got []string
		for _, s := range seq {
			got = append(got, string(s))
		}
		if strings.Join(got, ",") != "request,model_request,response,tool_request,done" {
			t.Fatalf("request %d: events %v", req, got)
		}
	}
	hc.CloseIdleConnections()
	// The server side of 200 connections closes after the client's does;
	// what stays after that is what the proxy keeps.
	var after runtime.MemStats
	var grown int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grown = int64(after.HeapAlloc) - int64(before.HeapAlloc); grown <= 16<<20 || time.Now().After(deadline) {
			break
		}
	}
	if grown > 16<<20 {
		t.Fatalf("the heap grew by %d MiB over 200 requests, and stayed so for 5 s", grown>>20)
	}
	t.Logf("heap %d KiB -> %d KiB", before.HeapAlloc>>10, after.HeapAlloc>>10)
}

// TestProgressOfAReplay: a replayed stream reports the same progress as
// the live one it was recorded from.
func TestProgressOfAReplay(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := front(t, up, ModeAuto, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
	var live recorder
	unsubscribe := p.Subscribe(live.handle)
	sdkCalls["anthropic"](t, hc, up.URL)
	live.wait(t, EventDone)
	unsubscribe()
	for deadline := time.Now().Add(2 * time.Second); p.Stats().Recorded != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not recorded")
		}
	}
	p, hc = restart(t, up, p, func(p *Proxy) { p.Mode = ModeReplay })
	var replayed recorder
	defer p.Subscribe(replayed.handle)()
	sdkCalls["anthropic"](t, hc, up.URL)
	evs := replayed.wait(t, EventDone)
	if types(evs) != types(live.events) || p.Stats().Replayed != 1 {
		t.Fatalf("replay events %s; live %s", types(evs), types(live.events))
	}
}

// A model request the proxy could not send (its upstream refused the
// connection) ends in an error event that is the proxy's own answer,
// which the fixture and evals tell apart from a provider's error by its
// prefix: never ": agentvcr proxy: ...".
func TestUnreachableUpstreamErrorEvent(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	p, hc := frontWith(t, up, func(p *Proxy) {
		p.Mode, p.Rules = ModePassthrough, []Rule{{Name: "model", URLPrefix: up.URL + "/"}}
	})
	up.Close() // its port refuses connections from now on
	var rec recorder
	defer p.Subscribe(rec.handle)()
	resp, err := hc.Post(up.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-test"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %d, want 502", resp.StatusCode)
	}
	evs := rec.wait(t, EventError)
	if last := evs[len(evs)-1]; !strings.HasPrefix(last.Error, "agentvcr proxy: upstream ") || last.Status != http.StatusBadGateway {
		t.Fatalf("error event %+v: want the proxy's own answer, status 502, starting %q", last, "agentvcr proxy: upstream ")
	}
}

// A response event carries the outcome its response's header says, by
// which the fixture tells a request the proxy answered itself (fault,
// missed), which never reached the provider, from one that went live.
func TestResponseEventSaysTheOutcome(t *testing.T) {
	tests := []struct {
		name  string
		mode  Mode
		fault *Fault
		want  Outcome
	}{
		{name: "passthrough", mode: ModePassthrough, want: OutcomePassthrough},
		{name: "recorded", mode: ModeAuto, want: OutcomeRecorded},
		{name: "an injected fault", mode: ModeAuto, fault: &Fault{Kind: FaultRejectModelRequest, Status: 500}, want: OutcomeFault},
		{name: "a replay miss", mode: ModeReplay, want: OutcomeMissed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int64
			up := providers(&hits)
			defer up.Close()
			p, hc := front(t, up, tt.mode, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
			if tt.fault != nil {
				if _, err := p.AddFault(*tt.fault); err != nil {
					t.Fatal(err)
				}
			}
			var rec recorder
			defer p.Subscribe(rec.handle)()
			resp, err := hc.Post(up.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"gpt-test","stream":true}`))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			evs := rec.wait(t, EventResponse)
			if tt.want == OutcomeRecorded {
				// Written before the test's directory goes.
				for deadline := time.Now().Add(2 * time.Second); p.Stats().Recorded != 1; time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("not recorded")
					}
				}
				if err := p.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			for _, ev := range evs {
				if ev.Type != EventResponse && ev.Outcome != "" {
					t.Errorf("%s event with outcome %q; only a response event has one", ev.Type, ev.Outcome)
				}
				if ev.Type == EventResponse && (ev.Outcome != tt.want || ev.Outcome != OutcomeOf(resp) || ev.Status != resp.StatusCode) {
					t.Fatalf("response event %+v; want outcome %q (the header says %q), status %d", ev, tt.want, OutcomeOf(resp), resp.StatusCode)
				}
			}
		})
	}
}

// TestEventsCarryTheURLRedacted: a subscriber (the control API's
// /v1/events, a test's report) gets each request's URL as the log has
// it, with no credential of its query.
func TestEventsCarryTheURLRedacted(t *testing.T) {
	r := newRig(t, ModePassthrough, t.TempDir())
	var rec recorder
	defer r.proxy.Subscribe(rec.handle)()
	const key = "plain-key-4711"
	r.post(t, "/v1/messages?api_key="+key, `{"prompt":"hi"}`)
	evs := rec.wait(t, EventDone)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	for _, e := range evs {
		if strings.Contains(e.URL, key) || !strings.HasPrefix(e.URL, r.upstream.URL+"/v1/messages?api_key=") {
			t.Fatalf("%s event's URL %q; want the request's, its key redacted", e.Type, e.URL)
		}
	}
}
