package store

import (
	"encoding/json"
	"time"
)

// Junior keeps model history as schema-version-2 rows whose "message" is
// the model message, Pi's shape, encoded as a JSON string. These are the
// three shapes the agent writes and reads back.

// Content is one block of a Pi message.
type Content struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"thinkingSignature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a model call's token counts and cost.
type Usage struct {
	Input        int64     `json:"input"`
	Output       int64     `json:"output"`
	CacheRead    int64     `json:"cacheRead"`
	CacheWrite   int64     `json:"cacheWrite"`
	TotalTokens  int64     `json:"totalTokens"`
	Cost         UsageCost `json:"cost"`
	CacheWrite1h int64     `json:"cacheWrite1h"`
}

// UsageCost is a call's cost in dollars.
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Assistant is an assistant message.
type Assistant struct {
	Content       []Content `json:"content"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	Model         string    `json:"model"`
	Usage         Usage     `json:"usage"`
	StopReason    string    `json:"stopReason"`
	Timestamp     int64     `json:"timestamp"`
	ResponseID    string    `json:"responseId"`
	RawStopReason string    `json:"rawStopReason"`
}

// ToolResult is a tool's answer.
type ToolResult struct {
	ToolCallID string    `json:"toolCallId"`
	ToolName   string    `json:"toolName"`
	Content    []Content `json:"content"`
	Details    struct{}  `json:"details"`
	IsError    bool      `json:"isError"`
	Timestamp  int64     `json:"timestamp"`
}

// UserText encodes a user message of one text block.
func UserText(text string, ts int64) string {
	return encode(map[string]any{"content": []Content{{Type: "text", Text: text}}, "timestamp": ts})
}

// Encode encodes a Pi message as the string a v2 row carries, its text
// written plainly, as Junior's JSON.stringify writes it.
func Encode(v any) string { return encode(v) }

func encode(v any) string {
	b, _ := marshal(v)
	return string(b)
}

func nowMs() int64 { return time.Now().UnixMilli() }

// NowMs is the time a Pi message carries.
func NowMs() int64 { return nowMs() }
