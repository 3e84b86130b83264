package fakeai

import (
	"encoding/json"
	"errors"
	"fmt"
)

// responseJSON is a Response as the proxy's control API takes it, one key
// set: {"text"}, {"output"}, {"toolCalls": [{"name", "input"}], "then"},
// {"truncated"} or {"providerError": status}; and "usage" to report
// given token counts.
type responseJSON struct {
	Text          *string          `json:"text,omitempty"`
	Output        *json.RawMessage `json:"output,omitempty"`
	ToolCalls     []toolCallJSON   `json:"toolCalls,omitempty"`
	Truncated     *string          `json:"truncated,omitempty"`
	ProviderError int              `json:"providerError,omitempty"`
	Then          *Response        `json:"then,omitempty"`
	Usage         *Usage           `json:"usage,omitempty"`
}

type toolCallJSON struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// UnmarshalJSON reads a Response as the control API takes it.
func (r *Response) UnmarshalJSON(b []byte) error {
	var j responseJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	set := 0
	for _, ok := range []bool{j.Text != nil, j.Output != nil, j.ToolCalls != nil, j.Truncated != nil, j.ProviderError != 0} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return errors.New(`a response has exactly one of "text", "output", "toolCalls", "truncated" and "providerError"`)
	}
	switch {
	case j.Text != nil:
		*r = Text(*j.Text)
	case j.Output != nil:
		var v any
		if err := json.Unmarshal(*j.Output, &v); err != nil {
			return err
		}
		*r = Output(v)
	case j.ToolCalls != nil:
		if len(j.ToolCalls) == 0 {
			return errors.New(`"toolCalls" needs at least one call`)
		}
		var calls []ToolCall
		for _, c := range j.ToolCalls {
			if c.Name == "" {
				return errors.New(`a tool call needs a "name"`)
			}
			input := c.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !isObject(input) {
				return fmt.Errorf("tool call %s: the input is %s; a tool's input is a JSON object", c.Name, input)
			}
			calls = append(calls, ToolCall{Name: c.Name, Input: input})
		}
		*r = ToolCalls(calls...)
	case j.Truncated != nil:
		*r = Truncated(*j.Truncated)
	default:
		if j.ProviderError < 400 || j.ProviderError > 599 {
			return fmt.Errorf("providerError %d: want an HTTP error status, 400 to 599", j.ProviderError)
		}
		*r = ProviderError(j.ProviderError)
	}
	if j.Usage != nil {
		if err := j.Usage.check(); err != nil {
			return err
		}
		r.usage = j.Usage
	}
	if j.Then != nil {
		*r = r.Then(*j.Then)
	}
	return nil
}

// MarshalJSON writes a Response as UnmarshalJSON reads it.
func (r Response) MarshalJSON() ([]byte, error) {
	var j responseJSON
	switch r.kind {
	case kindText:
		j.Text = &r.text
	case kindOutput:
		b, err := json.Marshal(r.output)
		if err != nil {
			return nil, err
		}
		raw := json.RawMessage(b)
		j.Output = &raw
	case kindToolCalls:
		j.ToolCalls = []toolCallJSON{}
		for _, c := range r.calls {
			j.ToolCalls = append(j.ToolCalls, toolCallJSON(c))
		}
	case kindTruncated:
		j.Truncated = &r.text
	case kindError:
		j.ProviderError = r.status
	}
	j.Then, j.Usage = r.then, r.usage
	return json.Marshal(j)
}
