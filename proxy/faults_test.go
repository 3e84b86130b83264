package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/slack-go/slack"
)

func anthropicStream(c anthropic.Client) (anthropic.Message, error) {
	stream := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("fetch"))}})
	var msg anthropic.Message
	for stream.Next() {
		msg.Accumulate(stream.Current())
	}
	return msg, stream.Err()
}

func openaiChat(hc *http.Client, base string, retries int) error {
	client := openaiClient(hc, base, retries)
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("fetch")}})
	for stream.Next() {
	}
	return stream.Err()
}

func TestFaultsAsSDKsSeeThem(t *testing.T) {
	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/v1/"},
		Rule{Name: "slack", URLPrefix: up.URL + "/api/"})
	add := func(f Fault) {
		t.Helper()
		if _, err := p.AddFault(f); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("anthropic overloaded", func(t *testing.T) {
		before := hits.Load()
		add(Fault{Kind: FaultRejectModelRequest})
		_, err := anthropicStream(anthropicClient(hc, up.URL))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), "overloaded_error") {
			t.Fatalf("want a 529 overloaded_error from the SDK, got %v", err)
		}
		if hits.Load() != before {
			t.Fatal("a rejected request went upstream")
		}
		if _, err := anthropicStream(anthropicClient(hc, up.URL)); err != nil {
			t.Fatalf("the fault was once; the next request failed: %v", err)
		}
	})
	t.Run("anthropic api_error", func(t *testing.T) {
		add(Fault{Kind: FaultRejectModelRequest, Status: 500})
		_, err := anthropicStream(anthropicClient(hc, up.URL))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || !strings.Contains(apiErr.RawJSON(), "api_error") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("openai 429 is retried after Retry-After", func(t *testing.T) {
		before := hits.Load()
		add(Fault{Kind: FaultRejectModelRequest, Status: 429, RetryAfterMs: 300, Path: "/chat/completions"})
		start := time.Now()
		if err := openaiChat(hc, up.URL, 1); err != nil {
			t.Fatalf("the SDK's retry should have succeeded: %v", err)
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("the SDK retried after %v; Retry-After-Ms said 300ms", d)
		}
		if hits.Load() != before+1 {
			t.Fatalf("upstream hits %d -> %d; want the one retry", before, hits.Load())
		}
	})
	for _, status := range []int{500, 503} {
		t.Run("openai "+http.StatusText(status), func(t *testing.T) {
			add(Fault{Kind: FaultRejectModelRequest, Status: status})
			err := openaiChat(hc, up.URL, 0)
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Type != "server_error" {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("cut stream", func(t *testing.T) {
		add(Fault{Kind: FaultCutStream, After: 2})
		_, err := anthropicStream(anthropicClient(hc, up.URL))
		if err == nil {
			t.Fatal("a stream cut after two events ended without an error")
		}
	})
	t.Run("stalled stream", func(t *testing.T) {
		add(Fault{Kind: FaultStallStream, After: 1, DelayMs: 250})
		start := time.Now()
		if _, err := anthropicStream(anthropicClient(hc, up.URL)); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Fatalf("the stream took %v; the stall was 250ms", d)
		}
	})
	t.Run("latency", func(t *testing.T) {
		add(Fault{Kind: FaultLatency, DelayMs: 200, Route: "model"})
		start := time.Now()
		if _, err := anthropicStream(anthropicClient(hc, up.URL)); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Fatalf("took %v; want >= 200ms", d)
		}
	})
	t.Run("lost acknowledgement", func(t *testing.T) {
		before := hits.Load()
		add(Fault{Kind: FaultLostAck, Path: "/api/chat.postMessage"})
		api := slack.New("xoxb-test", slack.OptionAPIURL(up.URL+"/api/"), slack.OptionHTTPClient(hc))
		if _, _, err := api.PostMessage("C0EVAL0001", slack.MsgOptionText("hi", false)); err == nil {
			t.Fatal("the agent got an answer despite the lost acknowledgement")
		}
		if hits.Load() != before+1 {
			t.Fatal("the upstream did not get the request")
		}
	})
	t.Run("slack errors", func(t *testing.T) {
		api := slack.New("xoxb-test", slack.OptionAPIURL(up.URL+"/api/"), slack.OptionHTTPClient(hc))
		add(Fault{Kind: FaultSlackError, SlackMethod: "chat.postMessage", SlackError: "not_in_channel"})
		_, _, err := api.PostMessage("C0EVAL0001", slack.MsgOptionText("hi", false))
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != "not_in_channel" {
			t.Fatalf("got %v", err)
		}
		add(Fault{Kind: FaultSlackError, SlackMethod: "chat.postMessage", SlackError: "ratelimited", RetryAfterMs: 2000})
		_, _, err = api.PostMessage("C0EVAL0001", slack.MsgOptionText("hi", false))
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
			t.Fatalf("got %v", err)
		}
	})
	if len(p.Faults()) != 0 {
		t.Fatalf("faults left: %+v", p.Faults())
	}
}

// arrivals streams four SSE events at once from an upstream, through a
// proxy with the fault, and returns how long after the request each
// event reached the client, and the read error.
func arrivals(t *testing.T, f Fault) ([]time.Duration, error) {
	t.Helper()
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 4 {
			fmt.Fprintf(w, "data: {\"n\":%d}\n\n", i)
		}
	}))
	t.Cleanup(up.Close)
	p, hc := front(t, up, ModePassthrough, t.TempDir(), Rule{Name: "model", URLPrefix: up.URL + "/"})
	if _, err := p.AddFault(f); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := hc.Get(up.URL + "/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var at []time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			at = append(at, time.Since(start))
		}
	}
	return at, sc.Err()
}

func TestStallAndCutComeAfterEventN(t *testing.T) {
	const stall = 300 * time.Millisecond
	for _, after := range []int{0, 1, 2} {
		at, err := arrivals(t, Fault{Kind: FaultStallStream, After: after, DelayMs: int(stall / time.Millisecond)})
		if err != nil || len(at) != 4 {
			t.Fatalf("stall after %d: %d events, %v", after, len(at), err)
		}
		for i, d := range at {
			if before := i < after; before && d >= stall || !before && d < stall {
				t.Errorf("stall after %d: event %d arrived at %v", after, i+1, d)
			}
		}
	}
	for _, after := range []int{0, 1, 3} {
		at, err := arrivals(t, Fault{Kind: FaultCutStream, After: after})
		if len(at) != after || err == nil {
			t.Errorf("cut after %d: %d events reached the client, error %v", after, len(at), err)
		}
	}
}
