package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// historyItem is one model message of the current history version.
type historyItem struct {
	Type    string // user_message, assistant_message, tool_result
	Message string // the encoded Pi message
}

// currentHistory reads the model history the next call sends: the rows of
// the newest history_version, after its compaction's replacement when it
// has one.
func (r *Runner) currentHistory(ctx context.Context, id string) ([]historyItem, error) {
	events, err := r.st.Events(ctx, id)
	if err != nil {
		return nil, err
	}
	hv := 0
	for _, e := range events {
		hv = max(hv, e.HistoryVersion)
	}
	var items []historyItem
	for _, e := range events {
		if e.HistoryVersion != hv {
			continue
		}
		switch e.Type {
		case "compaction":
			var c struct {
				ReplacementHistory []struct {
					Item struct {
						Type    string `json:"type"`
						Message string `json:"message"`
					} `json:"item"`
				} `json:"replacementHistory"`
			}
			if err := json.Unmarshal(e.Payload, &c); err != nil {
				return nil, fmt.Errorf("%s seq %d: compaction: %w", id, e.Seq, err)
			}
			items = items[:0]
			for _, r := range c.ReplacementHistory {
				items = append(items, historyItem{r.Item.Type, r.Item.Message})
			}
		case "user_message", "assistant_message", "tool_result":
			m, err := junior.ModelMessage(e)
			if err != nil {
				return nil, fmt.Errorf("%s seq %d: %w", id, e.Seq, err)
			}
			items = append(items, historyItem{e.Type, m})
		}
	}
	return items, nil
}

// hasRuntimeContext says whether the history has a runtime context
// block: a user message with a text that opens <runtime-turn-context>.
func hasRuntimeContext(items []historyItem) bool {
	for _, it := range items {
		if it.Type != "user_message" {
			continue
		}
		var m struct {
			Content []store.Content `json:"content"`
		}
		json.Unmarshal([]byte(it.Message), &m)
		for _, c := range m.Content {
			if c.Type == "text" && strings.HasPrefix(c.Text, junior.RuntimeContextTag) {
				return true
			}
		}
	}
	return false
}

// modelHistory is the current history as Anthropic messages: runs of one
// role merged, thinking left out, tool results as user blocks.
func (r *Runner) modelHistory(ctx context.Context, id string) ([]anthropic.MessageParam, error) {
	items, err := r.currentHistory(ctx, id)
	if err != nil {
		return nil, err
	}
	type turn struct {
		user   bool
		blocks []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user, blocks})
	}
	for _, it := range items {
		var m struct {
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"toolCallId"`
			IsError    bool            `json:"isError"`
		}
		if err := json.Unmarshal([]byte(it.Message), &m); err != nil {
			return nil, fmt.Errorf("%s: a %s is not a model message: %w", id, it.Type, err)
		}
		var blocks []store.Content
		var text string
		if json.Unmarshal(m.Content, &blocks) != nil {
			json.Unmarshal(m.Content, &text) // a plain string content
			blocks = []store.Content{{Type: "text", Text: text}}
		}
		switch it.Type {
		case "user_message":
			var bs []anthropic.ContentBlockParamUnion
			for _, b := range blocks {
				if b.Type == "text" && b.Text != "" {
					bs = append(bs, anthropic.NewTextBlock(b.Text))
				}
			}
			add(true, bs...)
		case "assistant_message":
			var bs []anthropic.ContentBlockParamUnion
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if b.Text != "" {
						bs = append(bs, anthropic.NewTextBlock(b.Text))
					}
				case "toolCall":
					var input any = map[string]any{}
					if len(b.Arguments) > 0 {
						input = b.Arguments
					}
					bs = append(bs, anthropic.NewToolUseBlock(b.ID, input, b.Name))
				}
			}
			add(false, bs...)
		case "tool_result":
			var parts []string
			for _, b := range blocks {
				parts = append(parts, b.Text)
			}
			add(true, anthropic.NewToolResultBlock(m.ToolCallID, strings.Join(parts, "\n"), m.IsError))
		}
	}
	out := make([]anthropic.MessageParam, 0, len(turns))
	for _, t := range turns {
		if t.user {
			out = append(out, anthropic.NewUserMessage(t.blocks...))
		} else {
			out = append(out, anthropic.NewAssistantMessage(t.blocks...))
		}
	}
	return out, nil
}

// summaryPrompt starts the compaction call.
const summaryPrompt = "Summarize the conversation so far for a colleague who will continue it. Keep every decision, name, date and open question.\n\n"

// compactIfNeeded replaces the history with a summary when what the next
// call would send exceeds the context window: a compaction row that
// starts a new history_version, as Junior's replaceHistory does.
func (r *Runner) compactIfNeeded(ctx context.Context, t *turnState) error {
	items, err := r.currentHistory(r.ctx, t.conv)
	if err != nil {
		return err
	}
	size := len(instructionText(t.inputs))
	var transcript strings.Builder
	for _, it := range items {
		size += len(it.Message)
		fmt.Fprintf(&transcript, "%s: %s\n", it.Type, it.Message)
	}
	tokens := size / 4
	if tokens <= r.cfg.ContextWindowTokens || len(items) == 0 {
		return nil
	}
	summary, err := r.gw.Complete(ctx, summaryPrompt+transcript.String())
	if err != nil {
		return err
	}
	return r.append(t.conv, junior.Compaction(r.cfg.FastModel, summary, store.NowMs(), map[string]any{
		"reason": "capacity", "estimatedInputTokens": tokens, "triggerTokens": r.cfg.ContextWindowTokens,
		"inputLimitTokens": r.cfg.ContextWindowTokens, "inputMessageCount": len(items), "retainedMessageCount": 0, "summaryChars": len(summary)}))
}
