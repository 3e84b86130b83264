package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// gatewayProxy starts a proxy with the default allow list and rules, its
// upstream the stand-in server, and returns it and an agent's client.
func gatewayProxy(t *testing.T, up *fakeai.Server, mode proxy.Mode, dir string) (*proxy.Proxy, *http.Client) {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy.Proxy{CA: authority, Allow: proxy.DefaultAllow(), Rules: proxy.DefaultRules(), Mode: mode, Dir: dir, Upstream: up.Transport()}
	return p, serve(t, p)
}

// gatewayTurn sends what @ai-sdk/gateway sends for one streamed turn.
func gatewayTurn(t *testing.T, client *http.Client) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "https://ai-gateway.vercel.sh/v3/ai/language-model", strings.NewReader(
		`{"prompt":[{"role":"system","content":"You are the support agent."},{"role":"user","content":[{"type":"text","text":"Did the deploy go out?"}]}],`+
			`"tools":[{"type":"function","name":"lookup","inputSchema":{"type":"object"}}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("ai-language-model-specification-version", "3")
	req.Header.Set("ai-language-model-id", "anthropic/claude-fake")
	req.Header.Set("ai-language-model-streaming", "true")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("gateway turn: %d %v\n%s", resp.StatusCode, err, b)
	}
	return resp.Header.Get(proxy.Header), string(b)
}

func TestRecordAStandInGatewayAndReplayItOffline(t *testing.T) {
	up := fakeai.NewServer(t)
	up.Respond(fakeai.Agent{Name: "support", Tools: []string{"lookup"}}, fakeai.ToolCalls(fakeai.Call("lookup", map[string]string{"q": "deploy"})))
	dir := t.TempDir()
	p, client := gatewayProxy(t, up, proxy.ModeRecord, dir)
	var live recorder
	defer p.Subscribe(live.handle)()
	outcome, recorded := gatewayTurn(t, client)
	live.wait(t, proxy.EventDone)
	if outcome != "recorded" || !strings.Contains(recorded, `"type":"tool-call"`) {
		t.Fatalf("live: %s %q", outcome, recorded)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	up.Close() // offline from here

	p, client = gatewayProxy(t, up, proxy.ModeReplay, dir)
	var replayed recorder
	defer p.Subscribe(replayed.handle)()
	outcome, body := gatewayTurn(t, client)
	evs := replayed.wait(t, proxy.EventDone)
	if outcome != "replayed" || body != recorded {
		t.Fatalf("replay: %s, the stream differs:\n%s\nwant\n%s", outcome, body, recorded)
	}
	if types(evs) != types(live.events) || types(evs) != "request,model_request,response,tool_request,done" {
		t.Fatalf("replay events %s; live %s", types(evs), types(live.events))
	}
}

// fakeProxy is a proxy whose Anthropic rule is in mode fake, answered by
// m, and an agent's client that goes through it.
func fakeProxy(t *testing.T, m *fakeai.Model) (*proxy.Proxy, *http.Client) {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		m = fakeai.NewModel(func(string) {})
	}
	p := &proxy.Proxy{CA: authority, Allow: []string{"https://api.anthropic.com"}, Dir: t.TempDir(), Slack: slack.New(), Fake: m,
		Rules: []proxy.Rule{{Name: "anthropic", URLPrefix: "https://api.anthropic.com/", Mode: proxy.ModeFake}}}
	return p, serve(t, p)
}

// toolLoop runs the Anthropic SDK's tool loop through hc: the tool's
// result is lookup's, and it returns the final text.
func toolLoop(t *testing.T, hc *http.Client, lookup func(input []byte) string) string {
	t.Helper()
	client := anthropicClient(hc, "https://api.anthropic.com")
	params := anthropic.MessageNewParams{Model: "claude-fake", MaxTokens: 100,
		System:   []anthropic.TextBlockParam{{Text: "You are the support agent."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Did the deploy go out?"))},
		Tools:    []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup", InputSchema: anthropic.ToolInputSchemaParam{}}}}}
	for turn := 0; turn < 3; turn++ {
		s := client.Messages.NewStreaming(context.Background(), params)
		var msg anthropic.Message
		for s.Next() {
			if err := msg.Accumulate(s.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		var results []anthropic.ContentBlockParamUnion
		for _, b := range msg.Content {
			if b.Type == "tool_use" {
				results = append(results, anthropic.NewToolResultBlock(b.ID, lookup(b.Input), false))
			}
		}
		if len(results) == 0 {
			return msg.Content[0].Text
		}
		params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
	}
	t.Fatal("the loop did not end")
	return ""
}

func TestModeFakeRunsAToolLoopWithProgressAndHolds(t *testing.T) {
	m := fakeai.New(t)
	support := fakeai.Agent{Name: "support", Tools: []string{"lookup"}}
	m.Respond(support, fakeai.ToolCalls(fakeai.Call("lookup", map[string]string{"q": "deploy"})).Then(fakeai.Text("It went out at 14:02.")))
	p, hc := fakeProxy(t, m)
	var seen recorder
	defer p.Subscribe(seen.handle)()
	// A test holds the tool request, and the agent's tool waits for it.
	held, release := make(chan struct{}), make(chan struct{})
	defer p.Subscribe(func(ctx context.Context, ev proxy.Event) {
		if ev.Type == proxy.EventToolRequest {
			close(held)
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	})()
	toolRan := make(chan struct{})
	final := make(chan string, 1)
	go func() {
		final <- toolLoop(t, hc, func([]byte) string { close(toolRan); return `{"status":"deployed"}` })
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("no tool_request was held within 10 s")
	}
	select {
	case <-toolRan:
		t.Fatal("the tool ran while its request was held")
	default:
	}
	close(release)
	select {
	case got := <-final:
		if got != "It went out at 14:02." {
			t.Fatalf("final text %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool loop did not end within 10 s of the release")
	}
	const want = "request,model_request,response,tool_request,done,request,model_request,response,done"
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		seen.mu.Lock()
		got := types(seen.events)
		seen.mu.Unlock()
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events %s; want %s", got, want)
		}
	}
	calls := m.Calls(support)
	if len(calls) != 2 || calls[0].ToolCalls[0].Result != `{"status":"deployed"}` || p.Stats().Faked != 2 {
		t.Fatalf("calls %+v, stats %+v", calls, p.Stats())
	}
}

func TestFakeModelScriptedOverTheControlAPIWithCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: apt-get install curl (.ci/run does)")
	}
	p, hc := fakeProxy(t, nil)
	ctl := httptest.NewServer(handler(p, "tok"))
	defer ctl.Close()
	curl := func(want int, args ...string) string {
		t.Helper()
		out, err := exec.Command("curl", append([]string{"-sS", "-w", "\n%{http_code}", "-H", "Authorization: Bearer tok"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %v: %v\n%s", args, err, out)
		}
		i := strings.LastIndex(string(out), "\n")
		body, code := strings.TrimSpace(string(out[:i])), strings.TrimSpace(string(out[i+1:]))
		if code != fmt.Sprint(want) {
			t.Fatalf("curl %v: %s %s; want %d", args, code, body, want)
		}
		return body
	}
	// docs/proxy.md's example.
	curl(204, "-d", `{"agent":{"name":"support","tools":["lookup"]},"responses":[{"toolCalls":[{"name":"lookup","input":{"q":"deploy"}}],"then":{"text":"It went out at 14:02."}}]}`,
		ctl.URL+"/v1/fakeai/respond")
	curl(204, "-d", `{"name":"deploy question"}`, ctl.URL+"/v1/scopes")
	if got := toolLoop(t, hc, func([]byte) string { return `{"status":"deployed"}` }); got != "It went out at 14:02." {
		t.Fatalf("final text %q", got)
	}
	var calls struct {
		Calls []struct {
			Agent     string
			Prompt    struct{ System string }
			ToolCalls []struct {
				Name     string
				Returned bool
				Result   string
			}
		}
		Failures []string
	}
	if err := json.Unmarshal([]byte(curl(200, ctl.URL+"/v1/fakeai/calls?agent=support")), &calls); err != nil {
		t.Fatal(err)
	}
	if len(calls.Calls) != 2 || calls.Calls[0].Prompt.System != "You are the support agent." || len(calls.Calls[0].ToolCalls) != 1 ||
		!calls.Calls[0].ToolCalls[0].Returned || calls.Calls[0].ToolCalls[0].Result != `{"status":"deployed"}` || len(calls.Failures) != 0 {
		t.Fatalf("calls %+v", calls)
	}
	curl(200, "-d", `{"passed":true}`, ctl.URL+"/v1/scopes/deploy%20question/end")

	// An unscripted prompt: the agent gets a provider error, and the
	// scope fails though the test said it passed.
	curl(204, "-d", `{"name":"unscripted"}`, ctl.URL+"/v1/scopes")
	client := anthropicClient(hc, "https://api.anthropic.com")
	_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-fake", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Nobody scripted this"))}})
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("unscripted prompt: %v", err)
	}
	body := curl(422, "-d", `{"passed":true}`, ctl.URL+"/v1/scopes/unscripted/end")
	if !strings.Contains(body, "Nobody scripted this") || !strings.Contains(body, `"unscripted"`) {
		t.Fatalf("end of the failed scope: %s", body)
	}
	curl(400, "-d", `{"agent":{"name":"x"},"responses":[{"text":"a","truncated":"b"}]}`, ctl.URL+"/v1/fakeai/respond")
	if body := curl(400, "-d", `{"agent":{"name":"x","purpose":"routing"},"responses":[{"text":"a"}]}`, ctl.URL+"/v1/fakeai/respond"); !strings.Contains(body, `purpose \"routing\"`) {
		t.Fatalf("a purpose no prompt has: %s", body)
	}

	// A scope that ends with answers nobody asked for fails, and drops
	// them: the next scope's prompt is not answered from them.
	curl(204, "-d", `{"agent":{"name":"support"},"responses":[{"text":"never asked"}]}`, ctl.URL+"/v1/fakeai/respond")
	curl(204, "-d", `{"name":"agent stopped early"}`, ctl.URL+"/v1/scopes")
	body = curl(422, "-d", `{"passed":true}`, ctl.URL+"/v1/scopes/agent%20stopped%20early/end")
	if !strings.Contains(body, "never asked") || !strings.Contains(body, `"unused"`) {
		t.Fatalf("end of a scope with an unused script: %s", body)
	}
	curl(204, "-d", `{"name":"next"}`, ctl.URL+"/v1/scopes")
	if _, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{Model: "claude-fake", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}}); !errors.As(err, &apiErr) {
		t.Fatalf("the last scope's answer was given: %v", err)
	}
	// A reset waits for the scope to end, then forgets everything.
	curl(409, "-X", "DELETE", ctl.URL+"/v1/fakeai")
	curl(422, "-d", `{"passed":true}`, ctl.URL+"/v1/scopes/next/end")
	curl(204, "-X", "DELETE", ctl.URL+"/v1/fakeai")
	if body := curl(200, ctl.URL+"/v1/fakeai/calls"); body != `{"calls":[],"failures":[]}` {
		t.Fatalf("after a reset: %s", body)
	}
}
