package wire

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// Prompt is one model request read whole, the same in every dialect: what
// the scripted model (package fakeai) answers from and its calls report.
// ParseRequest is the part of it the proxy's progress events need.
type Prompt struct {
	Dialect Dialect `json:"dialect"`
	Model   string  `json:"model"`
	Stream  bool    `json:"stream"`
	// System is the whole system prompt (Anthropic system, OpenAI system
	// and developer messages, Responses instructions, AI SDK system
	// messages), parts joined by a blank line.
	System   string    `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools,omitempty"`
	// Schema is the JSON schema the request asks the answer to follow,
	// if it asks for structured output.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Results are the tool results the request carries.
	Results []ToolResult `json:"results,omitempty"`
	// Purpose is "agent" when tools are offered, "structured" when a
	// schema is asked for, else "text": what the proxy's model_request
	// event says.
	Purpose string `json:"purpose"`
	// MaxTokens is the output limit the request sets, 0 when none.
	MaxTokens int `json:"maxTokens,omitempty"`

	// Of the wire, for an answer in kind; not part of a call's report.
	Structured   bool   `json:"-"` // it asks for JSON output, with a schema or not
	IncludeUsage bool   `json:"-"` // OpenAI Chat: stream_options.include_usage
	Images       bool   `json:"-"` // OpenAI Chat: modalities asks for images
	SpecVersion  string `json:"-"` // AI SDK: ai-language-model-specification-version
	Size         int    `json:"-"` // bytes of the request body, for usage
}

// Message is one message of a prompt, its text parts joined.
type Message struct {
	Role string `json:"role"` // user, assistant or tool
	Text string `json:"text"`
}

// Tool is a tool the request offers.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// ToolResult is what an agent's tool returned, as the request carries it.
type ToolResult struct {
	CallID  string `json:"callId"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// Text is the prompt's messages, each as "role: text", one per line, for
// messages and predicates.
func (p *Prompt) Text() string {
	var b strings.Builder
	for _, m := range p.Messages {
		b.WriteString(m.Role + ": " + m.Text + "\n")
	}
	return b.String()
}

// LastUser is the text of the prompt's last user message.
func (p *Prompt) LastUser() string {
	for i := len(p.Messages) - 1; i >= 0; i-- {
		if p.Messages[i].Role == "user" {
			return p.Messages[i].Text
		}
	}
	return ""
}

// ParsePrompt reads a model request of dialect d whole. A body that is not
// JSON gives a Prompt with only the dialect (and the AI SDK headers).
func ParsePrompt(d Dialect, h http.Header, body []byte) *Prompt { return parsePrompt(d, h, body, true) }

// parsePrompt reads a model request of dialect d; unless whole, it skips
// the messages and tool results, which are most of a long conversation's
// bytes, and reads only the rest, for ParseRequest on the proxy's path.
func parsePrompt(d Dialect, h http.Header, body []byte, whole bool) *Prompt {
	// skip says a message of role is not read: only system prompts are,
	// unless the prompt is read whole.
	skip := func(role string) bool { return !whole && role != "system" && role != "developer" }
	// One pass over the body finds its top-level values; a path is then
	// read inside its value, not by a scan from the body's start, which
	// for a key the body lacks would cross the whole conversation.
	top := map[string]gjson.Result{}
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		top[k.String()] = v
		return true
	})
	get := func(path string) gjson.Result {
		key, rest, nested := strings.Cut(path, ".")
		if !nested {
			return top[key]
		}
		return top[key].Get(rest)
	}
	p := &Prompt{Dialect: d, Model: get("model").String(), Stream: get("stream").Bool(), Messages: []Message{}, Size: len(body),
		IncludeUsage: get("stream_options.include_usage").Bool(), SpecVersion: h.Get("ai-language-model-specification-version")}
	var system []string
	switch d {
	case Anthropic:
		system = texts(get("system"))
		p.MaxTokens = int(get("max_tokens").Int())
		var messages []gjson.Result
		if whole { // Anthropic's system prompt is not among its messages
			messages = get("messages").Array()
		}
		for _, m := range messages {
			role := m.Get("role").String()
			content := m.Get("content")
			if !content.IsArray() {
				p.Messages = append(p.Messages, Message{role, content.String()})
				continue
			}
			var text []string
			for _, part := range content.Array() {
				switch part.Get("type").String() {
				case "text":
					text = append(text, part.Get("text").String())
				case "tool_result":
					p.Results = append(p.Results, ToolResult{CallID: part.Get("tool_use_id").String(),
						Content: strings.Join(texts(part.Get("content")), "\n"), IsError: part.Get("is_error").Bool()})
				}
			}
			if len(text) > 0 {
				p.Messages = append(p.Messages, Message{role, strings.Join(text, "\n")})
			}
		}
		for _, t := range get("tools").Array() {
			p.Tools = append(p.Tools, Tool{t.Get("name").String(), t.Get("description").String(), raw(t.Get("input_schema"))})
		}
		// output_config.format is the current field; output_format is
		// the beta's, which older clients still send.
		for _, path := range []string{"output_config.format", "output_format"} {
			if f := get(path); f.Exists() {
				p.Schema, p.Structured = raw(f.Get("schema")), true
				break
			}
		}
	case OpenAIChat:
		p.Images = get(`modalities.#(=="image")`).Exists()
		p.MaxTokens = int(get("max_completion_tokens").Int())
		if p.MaxTokens == 0 {
			p.MaxTokens = int(get("max_tokens").Int())
		}
		for _, m := range get("messages").Array() {
			role := m.Get("role").String()
			if skip(role) {
				continue
			}
			switch role {
			case "system", "developer":
				system = append(system, texts(m.Get("content"))...)
			case "tool":
				p.Results = append(p.Results, ToolResult{CallID: m.Get("tool_call_id").String(), Content: strings.Join(texts(m.Get("content")), "\n")})
			default:
				if t := strings.Join(texts(m.Get("content")), "\n"); t != "" {
					p.Messages = append(p.Messages, Message{role, t})
				}
			}
		}
		for _, t := range get("tools").Array() {
			f := t.Get("function")
			p.Tools = append(p.Tools, Tool{f.Get("name").String(), f.Get("description").String(), raw(f.Get("parameters"))})
		}
		if f := get("response_format"); f.Get("type").String() == "json_schema" {
			p.Schema, p.Structured = raw(f.Get("json_schema.schema")), true
		}
	case OpenAIResponses:
		p.MaxTokens = int(get("max_output_tokens").Int())
		if s := get("instructions").String(); s != "" {
			system = append(system, s)
		}
		input := get("input")
		if !input.IsArray() {
			p.Messages = append(p.Messages, Message{"user", input.String()})
		}
		for _, item := range input.Array() {
			if skip(item.Get("role").String()) {
				continue
			}
			switch item.Get("type").String() {
			case "function_call_output":
				p.Results = append(p.Results, ToolResult{CallID: item.Get("call_id").String(), Content: item.Get("output").String()})
			case "message", "":
				role := item.Get("role").String()
				t := strings.Join(texts(item.Get("content")), "\n")
				if role == "system" || role == "developer" {
					system = append(system, t)
				} else if t != "" {
					p.Messages = append(p.Messages, Message{role, t})
				}
			}
		}
		for _, t := range get("tools").Array() {
			p.Tools = append(p.Tools, Tool{t.Get("name").String(), t.Get("description").String(), raw(t.Get("parameters"))})
		}
		if f := get("text.format"); f.Get("type").String() == "json_schema" {
			p.Schema, p.Structured = raw(f.Get("schema")), true
		}
	case AISDK:
		p.Model = h.Get("ai-language-model-id")
		p.Stream = h.Get("ai-language-model-streaming") == "true"
		p.MaxTokens = int(get("maxOutputTokens").Int())
		for _, m := range get("prompt").Array() {
			role := m.Get("role").String()
			if skip(role) {
				continue
			}
			if role == "system" {
				system = append(system, texts(m.Get("content"))...)
				continue
			}
			var text []string
			for _, part := range m.Get("content").Array() {
				switch part.Get("type").String() {
				case "text":
					text = append(text, part.Get("text").String())
				case "tool-result":
					out := part.Get("output")
					content, isErr := out.Get("value"), strings.HasPrefix(out.Get("type").String(), "error")
					if !out.Exists() {
						content = part.Get("result") // V1
					}
					c := content.String()
					if content.IsObject() || content.IsArray() {
						c = content.Raw
					}
					p.Results = append(p.Results, ToolResult{CallID: part.Get("toolCallId").String(), Content: c, IsError: isErr})
				}
			}
			if len(text) > 0 {
				p.Messages = append(p.Messages, Message{role, strings.Join(text, "\n")})
			}
		}
		for _, t := range get("tools").Array() {
			p.Tools = append(p.Tools, Tool{t.Get("name").String(), t.Get("description").String(), raw(t.Get("inputSchema"))})
		}
		if f := get("responseFormat"); f.Get("type").String() == "json" {
			p.Schema, p.Structured = raw(f.Get("schema")), true
		}
	}
	p.System = strings.Join(system, "\n\n")
	switch {
	case len(p.Tools) > 0:
		p.Purpose = "agent"
	case p.Schema != nil:
		p.Purpose = "structured"
	default:
		p.Purpose = "text"
	}
	return p
}

// texts returns the text of a content value: a string, or the text of
// each of its parts (Anthropic and AI SDK text parts, OpenAI text and
// input_text parts).
func texts(v gjson.Result) []string {
	if !v.Exists() || v.Type == gjson.Null {
		return nil
	}
	if !v.IsArray() {
		return []string{v.String()}
	}
	var out []string
	for _, part := range v.Array() {
		if part.Type == gjson.String {
			out = append(out, part.String())
			continue
		}
		switch part.Get("type").String() {
		case "text", "input_text", "output_text":
			out = append(out, part.Get("text").String())
		}
	}
	return out
}

func raw(v gjson.Result) json.RawMessage {
	if !v.Exists() {
		return nil
	}
	return json.RawMessage(v.Raw)
}
