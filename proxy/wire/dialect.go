package wire

import (
	"net/http"
	"strings"
)

// Dialect names a model API's wire format.
type Dialect string

// The dialects a Parser reads.
const (
	Anthropic       Dialect = "anthropic"
	OpenAIChat      Dialect = "openai-chat"
	OpenAIResponses Dialect = "openai-responses"
	AISDK           Dialect = "ai-sdk"
)

// ParseDialect returns the dialect named s, or false.
func ParseDialect(s string) (Dialect, bool) {
	switch d := Dialect(s); d {
	case Anthropic, OpenAIChat, OpenAIResponses, AISDK:
		return d, true
	}
	return "", false
}

// DialectOf returns the dialect a request path speaks, or "" when it is
// not a model request. Only the end of the path counts, so base paths
// such as /v1/ai or /openai/v1 are fine.
func DialectOf(path string) Dialect {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(path, "/v1/messages"):
		return Anthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return OpenAIChat
	case strings.HasSuffix(path, "/responses"):
		return OpenAIResponses
	case strings.HasSuffix(path, "/language-model"):
		return AISDK
	}
	return ""
}

// Request is what a model request asks for.
type Request struct {
	Dialect Dialect `json:"dialect"`
	// Model is the model id, from the body or (AI SDK) the
	// ai-language-model-id header.
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
	// Tools are the names of the tools offered to the model.
	Tools []string `json:"tools,omitempty"`
	// Structured says the request asks for JSON output (a schema), as
	// routers and judges do.
	Structured bool `json:"structured,omitempty"`
	// System is the start of the system prompt (at most 200 bytes), for
	// classifiers that tell an agent loop from titles and routers.
	System string `json:"system,omitempty"`
}

// ParseRequest reads a model request's header and body: the part of its
// Prompt that progress events report. A body that is not JSON gives a
// Request with only the dialect (and the AI SDK headers).
func ParseRequest(d Dialect, h http.Header, body []byte) Request {
	return parsePrompt(d, h, body, false).Request()
}

// Request is the part of the prompt that progress events report: its
// tools by name, and the start of its system prompt.
func (p *Prompt) Request() Request {
	r := Request{Dialect: p.Dialect, Model: p.Model, Stream: p.Stream, Structured: p.Structured, System: p.System}
	for _, t := range p.Tools {
		if t.Name != "" {
			r.Tools = append(r.Tools, t.Name)
		}
	}
	if len(r.System) > 200 {
		r.System = r.System[:200]
	}
	return r
}
