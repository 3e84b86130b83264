package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// Gateway calls the model gateway in the protocols Junior uses.
type Gateway struct {
	// BaseURL is the gateway, https://ai-gateway.vercel.sh.
	BaseURL string
	// APIKey authenticates to it.
	APIKey string
	// HTTP sends the requests (through the proxy in tests).
	HTTP *http.Client
	// AgentModel runs the agent loop; FastModel the router, titles and
	// summaries.
	AgentModel, FastModel string
}

// anthropic is the Messages client. It does not retry: a provider error
// fails the turn with a reply, as Junior's does, and the person decides
// whether to ask again.
func (g *Gateway) anthropic() anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(g.BaseURL), option.WithAPIKey(g.APIKey),
		option.WithHTTPClient(g.HTTP), option.WithMaxRetries(0))
}

// RouterSystem is the router's system prompt, Junior's words.
const RouterSystem = "You choose the execution profile most likely to produce a complete, source-grounded answer for the user's request."

// Route is the router's choice.
type Route struct {
	ModelID        string  `json:"-"`
	Profile        string  `json:"profile"`
	ReasoningLevel string  `json:"reasoning_level"`
	Confidence     float64 `json:"confidence"`
	Reason         string  `json:"reason"`
	CostUSD        float64 `json:"-"`
}

var routeSchema = json.RawMessage(`{"type":"object","additionalProperties":false,
	"required":["reasoning_level","profile","confidence","reason"],
	"properties":{"reasoning_level":{"enum":["none","low","medium","high","xhigh"]},
		"profile":{"enum":["fast","standard","deep"]},"confidence":{"type":"number"},"reason":{"type":"string"}}}`)

// Route asks the router (AI SDK protocol, structured output) which
// profile a request needs.
func (g *Gateway) Route(ctx context.Context, request string) (Route, error) {
	a, err := g.object(ctx, objectCall{name: "router", output: "route", system: RouterSystem, prompt: request, schema: routeSchema, maxTokens: 140})
	if err != nil {
		return Route{}, err
	}
	var r Route
	if err := json.Unmarshal([]byte(a.text), &r); err != nil {
		return Route{}, fmt.Errorf("router: the answer is not the schema's JSON: %w", err)
	}
	r.ModelID = g.AgentModel
	r.CostUSD = cost(a.in, a.out)
	return r, nil
}

// cost prices tokens at a flat rate: the reference agent reports a cost
// so the fixture can add it up, not a provider's price list.
func cost(in, out int64) float64 { return float64(in)*2e-6 + float64(out)*6e-6 }

// Cost is what a call of in and out tokens cost, at the agent's rate.
func Cost(in, out int64) float64 { return cost(in, out) }

// Step is one streamed agent-loop call on Anthropic Messages, tools
// offered.
func (g *Gateway) Step(ctx context.Context, system string, messages []anthropic.MessageParam, tools []anthropic.ToolUnionParam) (*anthropic.Message, error) {
	return g.stream(ctx, anthropic.MessageNewParams{Model: anthropic.Model(g.AgentModel), MaxTokens: 4096,
		System: []anthropic.TextBlockParam{{Text: system}}, Messages: messages, Tools: tools})
}

// Complete is a plain text call (titles, summaries): no tools, no system
// prompt, one user message.
func (g *Gateway) Complete(ctx context.Context, prompt string) (string, error) {
	msg, err := g.stream(ctx, anthropic.MessageNewParams{Model: anthropic.Model(g.FastModel), MaxTokens: 512,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))}})
	if err != nil {
		return "", err
	}
	var text strings.Builder
	for _, c := range msg.Content {
		text.WriteString(c.Text)
	}
	return strings.TrimSpace(text.String()), nil
}

func (g *Gateway) stream(ctx context.Context, params anthropic.MessageNewParams) (*anthropic.Message, error) {
	client := g.anthropic()
	s := client.Messages.NewStreaming(ctx, params)
	defer s.Close()
	var msg anthropic.Message
	for s.Next() {
		if err := msg.Accumulate(s.Current()); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &msg, nil
}
