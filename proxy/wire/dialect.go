package wire

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
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

// ParseRequest reads a model request's header and body. A body that is
// not JSON gives a Request with only the dialect (and the AI SDK headers).
func ParseRequest(d Dialect, h http.Header, body []byte) Request {
	r := Request{Dialect: d}
	j := gjson.ParseBytes(body)
	r.Model = j.Get("model").String()
	r.Stream = j.Get("stream").Bool()
	names := "tools.#.name"
	var system gjson.Result
	switch d {
	case Anthropic:
		system = j.Get("system")
		if system.IsArray() {
			system = system.Get("0.text")
		}
		r.Structured = j.Get("output_config.format").Exists() || j.Get("output_format").Exists()
	case OpenAIChat:
		names = "tools.#.function.name"
		system = j.Get(`messages.#(role=="system").content`)
		r.Structured = j.Get("response_format.type").String() == "json_schema"
	case OpenAIResponses:
		system = j.Get("instructions")
		r.Structured = j.Get("text.format.type").String() == "json_schema"
	case AISDK:
		r.Model = h.Get("ai-language-model-id")
		r.Stream = h.Get("ai-language-model-streaming") == "true"
		system = j.Get(`prompt.#(role=="system").content`)
		r.Structured = j.Get("responseFormat.type").String() == "json"
	}
	for _, n := range j.Get(names).Array() {
		r.Tools = append(r.Tools, n.String())
	}
	if system.IsArray() {
		system = system.Get("0.text")
	}
	r.System = system.String()
	if len(r.System) > 200 {
		r.System = r.System[:200]
	}
	return r
}
