package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// objectCall is one structured-output call on the fast model (AI SDK
// protocol), as Junior's completeObject makes it: a system prompt, one
// user message, and a JSON schema the answer follows.
type objectCall struct {
	name      string // names the call in errors
	output    string // names the schema
	system    string
	prompt    string
	schema    json.RawMessage
	maxTokens int
}

// objectAnswer is the answer's JSON text and its usage.
type objectAnswer struct {
	text    string
	in, out int64
}

func (g *Gateway) object(ctx context.Context, c objectCall) (objectAnswer, error) {
	body, _ := json.Marshal(map[string]any{
		"prompt": []any{
			map[string]any{"role": "system", "content": c.system},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": c.prompt}}},
		},
		"responseFormat":  map[string]any{"type": "json", "schema": c.schema, "name": c.output},
		"maxOutputTokens": c.maxTokens, "temperature": 0,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(g.BaseURL, "/")+"/v3/ai/language-model", bytes.NewReader(body))
	if err != nil {
		return objectAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.APIKey)
	req.Header.Set("ai-language-model-id", g.FastModel)
	req.Header.Set("ai-language-model-streaming", "false")
	req.Header.Set("ai-language-model-specification-version", "3")
	req.Header.Set("ai-gateway-protocol-version", "0.0.1")
	resp, err := g.HTTP.Do(req)
	if err != nil {
		return objectAnswer{}, fmt.Errorf("%s: %w", c.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return objectAnswer{}, fmt.Errorf("%s: %w", c.name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return objectAnswer{}, fmt.Errorf("%s: %s: %.300s", c.name, resp.Status, b)
	}
	var out struct {
		Content []struct{ Type, Text string }
		Usage   struct {
			InputTokens  struct{ Total float64 }
			OutputTokens struct{ Total float64 }
		}
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Content) == 0 {
		return objectAnswer{}, fmt.Errorf("%s: unreadable answer %.300s", c.name, b)
	}
	return objectAnswer{text: out.Content[0].Text, in: int64(out.Usage.InputTokens.Total), out: int64(out.Usage.OutputTokens.Total)}, nil
}

// MemorySystem is the memory extraction's system prompt: what a scripted
// test matches it by.
const MemorySystem = "You extract memories: durable facts from a conversation turn that will help in later conversations, " +
	"such as the user's preferences, role, projects and the team's conventions. Leave out what only mattered to this turn."

// Memory is a fact Extract found: about the user, or the workspace's
// (About "workspace").
type Memory struct {
	Text  string `json:"text"`
	About string `json:"about"` // user, workspace
}

var memorySchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["memories"],
	"properties":{"memories":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["text","about"],
		"properties":{"text":{"type":"string"},"about":{"enum":["user","workspace"]}}}}}}`)

// Extract asks the fast model (structured output, MemorySystem) what of
// transcript is worth remembering; none is an empty list.
func (g *Gateway) Extract(ctx context.Context, transcript string) ([]Memory, error) {
	a, err := g.object(ctx, objectCall{name: "memories", output: "memories", system: MemorySystem, prompt: transcript, schema: memorySchema, maxTokens: 800})
	if err != nil {
		return nil, err
	}
	var out struct{ Memories []Memory }
	if err := json.Unmarshal([]byte(a.text), &out); err != nil {
		return nil, fmt.Errorf("memories: the answer is not the schema's JSON: %w", err)
	}
	return out.Memories, nil
}
