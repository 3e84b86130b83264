package wire

import "encoding/json"

// Kind says what an Event reports.
type Kind string

// The kinds of Event.
const (
	// KindText is a piece of the model's text.
	KindText Kind = "text"
	// KindToolCall is a tool call, once its arguments are complete.
	KindToolCall Kind = "tool_call"
	// KindFinish ends a response: why, and what it cost.
	KindFinish Kind = "finish"
	// KindError is a provider error: an error status, an error event
	// after a 200, or a stream cut before its finish.
	KindError Kind = "error"
)

// Event is one thing a model response said, the same in every dialect.
type Event struct {
	Kind   Kind      `json:"kind"`
	Text   string    `json:"text,omitempty"`
	Tool   *ToolCall `json:"tool,omitempty"`
	Finish *Finish   `json:"finish,omitempty"`
	Error  *Error    `json:"error,omitempty"`
}

// ToolCall is a tool the model asked for.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Args is the arguments object. When the model's arguments are not
	// valid JSON (a truncated response), Args is them as a JSON string
	// and Invalid is set.
	Args    json.RawMessage `json:"args"`
	Invalid bool            `json:"invalid,omitempty"`
}

// Finish is how a response ended.
type Finish struct {
	// Reason is the provider's own word: end_turn, tool_use, stop,
	// tool_calls, length, max_output_tokens, tool-calls...
	Reason string `json:"reason"`
	// Truncated says the model stopped at a token limit.
	Truncated bool `json:"truncated,omitempty"`
	// InputTokens counts every input token, those read from or written
	// to the prompt cache included: Anthropic reports the three apart and
	// they are added here, OpenAI's prompt_tokens holds them already. So
	// the tokens billed at the plain input price are InputTokens less
	// CacheReadTokens and CacheWriteTokens, in every dialect.
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// CacheReadTokens and CacheWriteTokens are the input tokens read
	// from and written to the provider's prompt cache.
	CacheReadTokens  int `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
	// ServerTools counts the requests of tools the provider ran itself,
	// billed per request, by tool: web_search, web_fetch,
	// code_execution... (Anthropic's usage.server_tool_use, the
	// Responses API's *_call output items).
	ServerTools map[string]int `json:"serverTools,omitempty"`
}

// Error is a provider error.
type Error struct {
	// Status is the HTTP status (200 for an error inside a stream).
	Status  int    `json:"status"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
}

// truncated reports whether a finish reason means a token limit.
func truncated(reason string) bool {
	switch reason {
	case "max_tokens", "length", "max_output_tokens", "model_context_window_exceeded":
		return true
	}
	return false
}

// toolCall makes a ToolCall from arguments as the model sent them.
func toolCall(id, name, args string) *ToolCall {
	if args == "" {
		args = "{}"
	}
	if json.Valid([]byte(args)) {
		return &ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
	}
	s, _ := json.Marshal(args)
	return &ToolCall{ID: id, Name: name, Args: s, Invalid: true}
}
