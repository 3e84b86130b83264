package turn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/llm"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// turnState is a turn in progress: what it answers and how far it got,
// so a paused or parked turn can go on where it stopped.
type turnState struct {
	conv    string
	turnID  string
	inputs  []Input
	steps   int // model calls so far
	calls   int // tool calls so far
	started bool
	// waiting is the tool call a parked turn runs first when resumed.
	waiting *toolCall
	cancel  context.CancelFunc
	stopped bool // cancelled by a "stop" message
	paused  bool // past its slice, waiting in the queue
	claimed bool // parked, and its OAuth callback is storing the credential
}

type toolCall struct {
	ID, Name string
	Input    json.RawMessage
}

// Replies the agent gives when a turn cannot answer.
const (
	stopReply = "OK, I'll stay out of this thread."
	// failureReply is the reply of a turn the model provider failed, or
	// that ran out of time.
	failureReply = "Sorry, I couldn't finish that: the model provider failed. Please try again."
	// storeFailureReply is the reply of a turn whose rows could not be
	// stored.
	storeFailureReply = "Sorry, I couldn't finish that: I could not save this conversation. Please try again."
)

func (r *Runner) systemPrompt() string {
	return "You are " + r.cfg.BotName + ", a helpful assistant that answers people in Slack and on the web. " +
		"Use the tools when they help; answer briefly and say where facts came from."
}

// runTurn runs t to its end, a pause or an authorization wait, writing
// Junior's rows in Junior's order. A row it cannot store fails the turn.
func (r *Runner) runTurn(ctx context.Context, t *turnState) {
	conv, err := r.st.Conversation(r.ctx, t.conv)
	if err != nil {
		r.logf(slog.LevelError, "turn in %s: %v", t.conv, err)
		return
	}
	first := t.inputs[0]
	if r.isStopped(t) {
		r.cancelled(t, conv) // stopped while it waited for an authorization
		return
	}
	if !t.started {
		t.started = true
		// A turn that ended without closing its tool calls (the agent
		// stopped mid-tool) would make this turn's request one no
		// provider takes.
		if err := r.closeOpenCalls(t); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		var ids []string
		for _, in := range t.inputs {
			ids = append(ids, in.MessageID)
		}
		if err := r.append(t.conv, junior.TurnStarted(t.turnID, first.Surface, ids)); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		if first.Place.Channel != "" && first.Surface == "slack" {
			r.slack.SetStatus(ctx, first.Place.Channel, first.Place.ThreadTS, "is thinking…")
		}
		route, err := r.gw.Route(ctx, instructionText(t.inputs))
		if err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		if err := r.append(t.conv, junior.TurnRouted(t.turnID, junior.Route{CostUSD: route.CostUSD, ModelID: route.ModelID,
			Confidence: route.Confidence, Profile: route.Profile, ReasoningLevel: route.ReasoningLevel})); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		if err := r.compactIfNeeded(ctx, t); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		if err := r.recall(t, first); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		// The runtime context is written once per model history, as
		// Junior's bootstrap context: on a conversation's first turn, and
		// after a compaction replaced the history it was in.
		items, err := r.currentHistory(r.ctx, t.conv)
		if err != nil {
			r.end(ctx, t, conv, fmt.Errorf("%w: %w", errStore, err))
			return
		}
		now, by := time.Now().UnixMilli(), actor(first.Author)
		var rows []store.Row
		if !hasRuntimeContext(items) {
			rows = append(rows, junior.ContextMessage(junior.RuntimeContext(by), now))
		}
		rows = append(rows, junior.InstructionMessage(instruction(t.inputs), now, by))
		if err := r.append(t.conv, rows...); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
	}
	if t.waiting != nil {
		// Resumed after an authorization: the tool runs now.
		call := t.waiting
		t.waiting = nil
		if !r.runTool(ctx, t, conv, *call) {
			return
		}
	}
	slice := time.Now()
	for {
		if ctx.Err() != nil {
			r.cancelled(t, conv)
			return
		}
		messages, err := r.modelHistory(r.ctx, t.conv)
		if err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		tools := r.tools()
		if t.calls >= r.cfg.ToolCallLimit {
			tools = nil // the limit is reached: the model must answer
		}
		msg, err := r.gw.Step(ctx, r.systemPrompt(), messages, tools)
		t.steps++
		if err != nil || ctx.Err() != nil {
			r.end(ctx, t, conv, err)
			return
		}
		pi, calls := piAssistant(msg, r.cfg.AgentModel)
		var rows []store.Row
		for _, c := range calls {
			rows = append(rows, junior.ToolExecutionStarted(c.Name, c.ID))
		}
		rows = append(rows, junior.AssistantMessage(t.turnID, r.cfg.AgentModel, pi, len(calls) == 0))
		if err := r.append(t.conv, rows...); err != nil {
			r.end(ctx, t, conv, err)
			return
		}
		if len(calls) == 0 {
			r.finish(t, conv, junior.Text(pi), junior.Success)
			return
		}
		for _, c := range calls {
			t.calls++
			if !r.runTool(ctx, t, conv, c) {
				return
			}
		}
		// Past its slice the turn yields, as Junior's turns do before a
		// serverless deadline: its rest is queued and goes on in a new
		// slice.
		if time.Since(slice) > r.cfg.TurnSlice {
			r.pause(t)
			return
		}
	}
}

// runTool runs one call and writes its result; false means the turn
// stopped there (parked for an authorization, cancelled or failed).
func (r *Runner) runTool(ctx context.Context, t *turnState, conv store.Conversation, c toolCall) bool {
	out, isErr, authz, err := r.callTool(ctx, t, conv, c)
	if err != nil {
		r.end(ctx, t, conv, err)
		return false
	}
	if authz != "" {
		t.waiting = &c
		r.park(t, authz)
		return false
	}
	if ctx.Err() != nil {
		r.cancelled(t, conv)
		return false
	}
	res := store.ToolResult{ToolCallID: c.ID, ToolName: c.Name, Content: []store.Content{{Type: "text", Text: out}},
		IsError: isErr, Timestamp: time.Now().UnixMilli()}
	if err := r.append(t.conv, junior.ToolResult(res)); err != nil {
		r.end(ctx, t, conv, err)
		return false
	}
	return true
}

// finish delivers the reply and closes the turn: the inputs updated and
// handled, the visible reply and its handled row, the terminal row. If
// they cannot be stored, the turn fails instead.
func (r *Runner) finish(t *turnState, conv store.Conversation, reply, outcome string) {
	err := r.closeOpenCalls(t)
	if err == nil {
		err = r.deliver(t, conv, reply, junior.TurnCompleted(t.turnID, outcome))
	}
	if err != nil {
		r.fail(t, conv, junior.PersistenceFailed, err)
		return
	}
	r.completed(t, reply, outcome)
}

// end closes a turn that stopped on err or on its context: cancelled by
// a stop or the agent's shutdown, timed out, or failed: by the store, or
// by the model provider.
func (r *Runner) end(ctx context.Context, t *turnState, conv store.Conversation, err error) {
	switch {
	case ctx.Err() != nil:
		r.cancelled(t, conv)
	case errors.Is(err, errStore):
		r.fail(t, conv, junior.PersistenceFailed, err)
	default:
		r.fail(t, conv, junior.ModelExecutionFailed, err)
	}
}

// fail ends a started turn with code: the failure reply the user sees,
// and the turn_failed row. Open tool calls are closed when they can be;
// what cannot be stored now is logged, as nothing is left to fail.
func (r *Runner) fail(t *turnState, conv store.Conversation, code string, err error) {
	r.logf(slog.LevelWarn, "turn %s failed: %v", t.turnID, err)
	if !t.started {
		return
	}
	if err := r.closeOpenCalls(t); err != nil {
		r.logf(slog.LevelError, "turn %s: %v", t.turnID, err)
	}
	reply := failureReply
	if code == junior.PersistenceFailed {
		reply = storeFailureReply
	}
	if err := r.deliver(t, conv, reply, junior.TurnFailed(t.turnID, code)); err != nil {
		r.logf(slog.LevelError, "turn %s: its failure could not be stored: %v", t.turnID, err)
	}
}

func (r *Runner) cancelled(t *turnState, conv store.Conversation) {
	if errors.Is(context.Cause(r.ctx), context.Canceled) && r.ctx.Err() != nil {
		return // the agent is stopping: the turn stays open, as after a crash
	}
	if !r.takeStopping(t) {
		r.fail(t, conv, junior.AgentRunFailed, fmt.Errorf("turn timed out after %s", r.cfg.TurnTimeout))
		return
	}
	r.finish(t, conv, stopReply, junior.Cancelled)
}

// deliver posts the reply where the turn's first input came from and
// writes the rows that close the turn, ending with terminal, in one
// append.
func (r *Runner) deliver(t *turnState, conv store.Conversation, reply string, terminal store.Row) error {
	// Slack gets 30 s: a delivery that hangs must not keep the turn open.
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	first := t.inputs[0]
	meta := map[string]any{"author": map[string]any{"isBot": true, "userName": r.cfg.BotName}, "source": source(first.Surface)}
	if p := first.Place; p.Channel != "" {
		if ts, err := r.slack.Post(ctx, p.Channel, p.ThreadTS, reply); err != nil {
			r.logf(slog.LevelWarn, "turn %s: chat.postMessage: %v", t.turnID, err)
		} else {
			meta["slackTs"] = ts
		}
		if first.Surface == "slack" {
			r.slack.SetStatus(ctx, p.Channel, p.ThreadTS, "")
		}
	}
	var rows []store.Row
	for _, in := range t.inputs {
		rows = append(rows, junior.MessageUpdated(in.MessageID, in.Payload), junior.MessageHandled(in.MessageID))
	}
	replyID := junior.ReplyID(t.turnID)
	rows = append(rows, junior.Reply(t.turnID, reply, meta), junior.MessageHandled(replyID), terminal)
	return r.append(t.conv, rows...)
}

// closeOpenCalls answers each tool call of the history that has no
// result (the turn stopped while it ran) with an error result, so the
// next model request is one a provider takes: every tool_use answered.
func (r *Runner) closeOpenCalls(t *turnState) error {
	items, err := r.currentHistory(r.ctx, t.conv)
	if err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	answered := map[string]bool{}
	var open []toolCall
	for _, it := range items {
		switch it.Type {
		case "tool_result":
			var res store.ToolResult
			json.Unmarshal([]byte(it.Message), &res)
			answered[res.ToolCallID] = true
		case "assistant_message":
			var m store.Assistant
			json.Unmarshal([]byte(it.Message), &m)
			for _, c := range m.Content {
				if c.Type == "toolCall" {
					open = append(open, toolCall{ID: c.ID, Name: c.Name})
				}
			}
		}
	}
	var rows []store.Row
	for _, c := range open {
		if answered[c.ID] {
			continue
		}
		rows = append(rows, junior.ToolResult(store.ToolResult{ToolCallID: c.ID, ToolName: c.Name, IsError: true, Timestamp: time.Now().UnixMilli(),
			Content: []store.Content{{Type: "text", Text: "The turn ended before this tool finished."}}}))
	}
	if len(rows) == 0 {
		return nil
	}
	return r.append(t.conv, rows...)
}

func source(surface string) string {
	switch surface {
	case "api":
		return "web"
	default:
		return surface
	}
}

func instructionText(in []Input) string {
	var parts []string
	for _, i := range in {
		parts = append(parts, i.Text)
	}
	return strings.Join(parts, "\n\n")
}

// instruction is the instruction row's text: each input's
// current-instruction block, on a line of its own.
func instruction(in []Input) string {
	var blocks []string
	for _, i := range in {
		if i.Surface == "slack" {
			blocks = append(blocks, junior.CurrentInstruction(i.Text, i.Author.UserID, i.Author.FullName, i.MessageID))
		} else {
			blocks = append(blocks, junior.CurrentInstruction(i.Text, "", "", ""))
		}
	}
	return strings.Join(blocks, "\n")
}

// xmlEscape escapes text put in a prompt block, as Junior does.
func xmlEscape(s string) string { return junior.EscapeXML(s) }

func actor(au Author) map[string]any {
	m := map[string]any{"platform": au.Platform, "userId": au.UserID}
	if au.Email != "" {
		m["email"] = au.Email
	}
	if au.UserName != "" {
		m["userName"] = au.UserName
	}
	if au.TeamID != "" {
		m["teamId"] = au.TeamID
	}
	if au.FullName != "" && au.Platform == "slack" {
		m["fullName"] = au.FullName
	}
	return m
}

// piAssistant turns the model's message into Pi's assistant shape, and
// lists its tool calls.
func piAssistant(msg *anthropic.Message, model string) (store.Assistant, []toolCall) {
	in, out := msg.Usage.InputTokens, msg.Usage.OutputTokens
	usage := store.Usage{Input: in, Output: out, CacheRead: msg.Usage.CacheReadInputTokens, CacheWrite: msg.Usage.CacheCreationInputTokens}
	usage.TotalTokens = usage.Input + usage.Output + usage.CacheRead + usage.CacheWrite
	usage.Cost.Input, usage.Cost.Output = llm.Cost(in, 0), llm.Cost(0, out)
	usage.Cost.Total = usage.Cost.Input + usage.Cost.Output
	pi := store.Assistant{API: "anthropic-messages", Provider: "vercel-ai-gateway", Model: model, Usage: usage,
		Timestamp: time.Now().UnixMilli(), ResponseID: msg.ID, RawStopReason: string(msg.StopReason)}
	var calls []toolCall
	for _, c := range msg.Content {
		switch c.Type {
		case "thinking":
			th, sig := c.Thinking, c.Signature
			pi.Content = append(pi.Content, store.Content{Type: "thinking", Thinking: &th, Signature: &sig})
		case "text":
			pi.Content = append(pi.Content, store.Content{Type: "text", Text: c.Text})
		case "tool_use":
			input := json.RawMessage(c.Input)
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			pi.Content = append(pi.Content, store.Content{Type: "toolCall", ID: c.ID, Name: c.Name, Arguments: input})
			calls = append(calls, toolCall{ID: c.ID, Name: c.Name, Input: input})
		}
	}
	pi.StopReason = map[string]string{"tool_use": "toolUse", "max_tokens": "length"}[string(msg.StopReason)]
	if pi.StopReason == "" {
		pi.StopReason = "stop"
	}
	return pi, calls
}
