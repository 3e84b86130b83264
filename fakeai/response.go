package fakeai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Response is one scripted answer to one prompt. Build it with Text,
// Output, ToolCalls, Truncated or ProviderError.
type Response struct {
	kind   kind
	text   string
	output any
	calls  []ToolCall
	then   *Response
	status int
	usage  *Usage
}

// Usage is what a response says it used, for tests of cost accounting.
// Input counts every input token, cache reads and writes included, and
// each dialect reports it its own way (Anthropic's input_tokens leaves
// the cache out, OpenAI's prompt_tokens holds it).
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	// WebSearches are server-side web searches, billed per request:
	// Anthropic's server_tool_use.web_search_requests, and web_search_call
	// items in a Responses answer.
	WebSearches int `json:"webSearches,omitempty"`
}

// WithUsage returns r reporting u as its usage, instead of an estimate
// of four bytes a token. It applies to r alone, not to what Then adds.
func (r Response) WithUsage(u Usage) Response {
	if err := u.check(); err != nil {
		panic("fakeai: " + err.Error())
	}
	r.usage = &u
	return r
}

func (u Usage) check() error {
	if u.Input < u.CacheRead+u.CacheWrite || min(u.Output, u.CacheRead, u.CacheWrite, u.WebSearches) < 0 {
		return fmt.Errorf("usage %+v: no count is negative, and Input counts the cache reads and writes, so it is at least their sum", u)
	}
	return nil
}

type kind int

const (
	kindText kind = iota
	kindOutput
	kindToolCalls
	kindTruncated
	kindError
)

// Text answers with text, streamed in several deltas.
func Text(s string) Response { return Response{kind: kindText, text: s} }

// Output answers with v as structured output: v in JSON, which must fit
// the JSON schema the request asks for. A value that does not fit fails
// the call with a provider error, and the test, since the real model
// could not have answered it.
func Output(v any) Response { return Response{kind: kindOutput, output: v} }

// ToolCalls answers by asking for tools. Then says what the model answers
// once the agent sends the tools' results.
func ToolCalls(calls ...ToolCall) Response {
	if len(calls) == 0 {
		panic("fakeai.ToolCalls: no calls; a model that asks for tools asks for at least one")
	}
	return Response{kind: kindToolCalls, calls: calls}
}

// Truncated answers with text cut off at the token limit: finish reason
// length (OpenAI), max_tokens (Anthropic), incomplete (Responses).
func Truncated(text string) Response { return Response{kind: kindTruncated, text: text} }

// ProviderError answers with the provider's error for status in the
// request's dialect (429 rate limit, 500, 503, 529 overloaded...), before
// any byte of a stream.
func ProviderError(status int) Response {
	if status < 400 || status > 599 {
		panic(fmt.Sprintf("fakeai.ProviderError(%d): a provider error is a 4xx or 5xx status", status))
	}
	return Response{kind: kindError, status: status}
}

// Then returns r followed by next: the answer to the agent's next prompt,
// which carries the results of r's tool calls.
func (r Response) Then(next Response) Response {
	if r.then == nil {
		r.then = &next
		return r
	}
	rest := r.then.Then(next)
	r.then = &rest
	return r
}

// ToolCall is a tool the model asks for.
type ToolCall struct {
	Name  string
	Input json.RawMessage
}

// Call asks for the tool name with input, which is encoded as JSON and
// must be an object, as every provider's tool input is.
func Call(name string, input any) ToolCall {
	b, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("fakeai.Call(%q): the input is not JSON: %v", name, err))
	}
	if !isObject(b) {
		panic(fmt.Sprintf("fakeai.Call(%q): the input is %s; a tool's input is a JSON object", name, b))
	}
	return ToolCall{Name: name, Input: b}
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// String describes the response, as messages about a script show it.
func (r Response) String() string {
	var s string
	switch r.kind {
	case kindText:
		s = fmt.Sprintf("Text(%q)", clip(r.text))
	case kindOutput:
		b, _ := json.Marshal(r.output)
		s = fmt.Sprintf("Output(%s)", clip(string(b)))
	case kindToolCalls:
		var names []string
		for _, c := range r.calls {
			names = append(names, c.Name)
		}
		s = "ToolCalls(" + strings.Join(names, ", ") + ")"
	case kindTruncated:
		s = fmt.Sprintf("Truncated(%q)", clip(r.text))
	case kindError:
		s = fmt.Sprintf("ProviderError(%d)", r.status)
	}
	if r.usage != nil {
		s += fmt.Sprintf(".WithUsage(%+v)", *r.usage)
	}
	if r.then != nil {
		s += ".Then(" + r.then.String() + ")"
	}
	return s
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// answer is a response made concrete for one prompt: its text, and its
// tool calls with the ids the agent will send their results under.
type answer struct {
	id     int // numbers the response's own ids
	text   string
	calls  []sentCall
	finish finish
	status int    // a provider error, when not 0
	reason string // why a provider error, for its message
	retry  bool   // the client may retry it: a scripted error, not a mistake
	usage  *Usage // scripted, or nil for an estimate
}

type finish int

const (
	finishStop finish = iota
	finishTools
	finishLength
)

type sentCall struct {
	id, itemID string // itemID: the Responses output item id
	name       string
	input      json.RawMessage
}

// schemaURL names the request's schema for the compiler, which wants a
// URL; nothing is fetched from it.
const schemaURL = "https://fakeai.invalid/request-schema.json"

// outputText encodes v as a structured answer and checks it against the
// schema; schema nil checks nothing.
func outputText(v any, schema json.RawMessage) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("the output is not JSON: %w", err)
	}
	if len(schema) == 0 {
		return string(b), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return "", fmt.Errorf("the request's schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return "", fmt.Errorf("the request's schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return "", fmt.Errorf("the request's schema does not compile: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	if err := sch.Validate(inst); err != nil {
		return "", fmt.Errorf("the output does not fit the request's schema: %v", err)
	}
	return string(b), nil
}
