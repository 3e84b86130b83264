package fakeai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// aisdkTurn sends one AI SDK language-model request (what @ai-sdk/gateway
// sends: the call options as JSON, the model and streaming in headers)
// and returns the stream parts of the answer.
func aisdkTurn(t *testing.T, base string, prompt []any) []map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"prompt": prompt,
		"tools": []any{map[string]any{"type": "function", "name": "lookup",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}},
	})
	req, _ := http.NewRequest("POST", base+"/v3/ai/language-model", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("ai-language-model-specification-version", "3")
	req.Header.Set("ai-language-model-id", "anthropic/claude-fake")
	req.Header.Set("ai-language-model-streaming", "true")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var parts []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var part map[string]any
		if err := json.Unmarshal([]byte(data), &part); err != nil {
			t.Fatalf("stream part %q: %v", data, err)
		}
		parts = append(parts, part)
	}
	return parts
}

func TestAISDKProtocolToolLoop(t *testing.T) {
	m, srv := scripted(t)
	route := statusRoute(t)
	prompt := []any{
		map[string]any{"role": "system", "content": "You are the support agent."},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Did the deploy go out?"}}},
	}
	var answer, routeAnswer strings.Builder
	for turn := 0; turn < 3 && answer.Len() == 0; turn++ {
		parts := aisdkTurn(t, srv.URL, prompt)
		if parts[0]["type"] != "stream-start" || parts[len(parts)-1]["type"] != "finish" {
			t.Fatalf("parts %v", parts)
		}
		var calls, results []any
		for _, p := range parts {
			switch p["type"] {
			case "text-delta":
				answer.WriteString(p["delta"].(string))
			case "tool-call":
				out := lookup(t, route.URL, []byte(p["input"].(string)))
				routeAnswer.WriteString(out)
				calls = append(calls, map[string]any{"type": "tool-call", "toolCallId": p["toolCallId"], "toolName": p["toolName"], "input": p["input"]})
				results = append(results, map[string]any{"type": "tool-result", "toolCallId": p["toolCallId"], "toolName": p["toolName"],
					"output": map[string]any{"type": "text", "value": out}})
			}
		}
		if len(calls) > 0 {
			if reason := parts[len(parts)-1]["finishReason"].(map[string]any)["unified"]; reason != "tool-calls" {
				t.Fatalf("finish %v with tool calls", reason)
			}
			prompt = append(prompt, map[string]any{"role": "assistant", "content": calls}, map[string]any{"role": "tool", "content": results})
		}
	}
	checkLoop(t, m, routeAnswer.String(), answer.String())
	if got := m.Calls(support)[0].Prompt.Model; got != "anthropic/claude-fake" {
		t.Errorf("model %q; want the ai-language-model-id header's", got)
	}
}
