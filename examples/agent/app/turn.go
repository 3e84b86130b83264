package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/slack-go/slack"

	"github.com/agentvcr/agentvcr/examples/agent/llm"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// turnState is a turn in progress: what it answers and how far it got,
// so a paused or parked turn can go on where it stopped.
type turnState struct {
	conv    string
	turnID  string
	inputs  []input
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
	stopReply    = "OK, I'll stay out of this thread."
	failureReply = "Sorry, I couldn't finish that: the model provider failed. Please try again."
)

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// turnID is Junior's: turn_ and the first input's message id, made safe.
func turnID(messageID string) string { return "turn_" + unsafeID.ReplaceAllString(messageID, "_") }

func (a *App) systemPrompt() string {
	return "You are " + a.cfg.BotName + ", a helpful assistant that answers people in Slack and on the web. " +
		"Use the tools when they help; answer briefly and say where facts came from."
}

// runTurn runs t to its end, a pause or an authorization wait, writing
// Junior's rows in Junior's order.
func (a *App) runTurn(ctx context.Context, t *turnState) {
	conv, err := a.st.Conversation(a.ctx, t.conv)
	if err != nil {
		a.logf(slog.LevelError, "turn in %s: %v", t.conv, err)
		return
	}
	first := t.inputs[0]
	if a.isStopped(t) {
		a.cancelled(t, conv) // stopped while it waited for an authorization
		return
	}
	if !t.started {
		t.started = true
		// A turn that ended without closing its tool calls (the agent
		// stopped mid-tool) would make this turn's request one no
		// provider takes.
		a.closeOpenCalls(t)
		var ids []string
		for _, in := range t.inputs {
			ids = append(ids, in.MessageID)
		}
		a.append(t.conv, store.Row{Type: "turn_started", Key: "turn:" + t.turnID + ":started",
			Payload: map[string]any{"turnId": t.turnID, "surface": first.Surface, "inputMessageIds": ids}})
		if first.Place.Channel != "" && first.Surface == "slack" {
			a.slack.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
				ChannelID: first.Place.Channel, ThreadTS: first.Place.ThreadTS, Status: "is thinking…"})
		}
		route, err := a.gw.Route(ctx, instructionText(t.inputs))
		if err != nil {
			a.end(ctx, t, conv, err)
			return
		}
		a.append(t.conv, store.Row{Type: "turn_routed", Key: "turn:" + t.turnID + ":routed", Payload: map[string]any{
			"source": "router", "turnId": t.turnID, "costUsd": route.CostUSD, "modelId": route.ModelID,
			"confidence": route.Confidence, "modelProfile": route.Profile, "reasoningLevel": route.ReasoningLevel}})
		if err := a.compactIfNeeded(ctx, t); err != nil {
			a.end(ctx, t, conv, err)
			return
		}
		now := time.Now().UnixMilli()
		a.append(t.conv,
			store.Row{Type: "user_message", SchemaVersion: 2, Payload: map[string]any{
				"message": store.UserText(a.runtimeContext(conv, first), now), "provenance": map[string]any{"authority": "context"}}},
			store.Row{Type: "user_message", SchemaVersion: 2, Payload: map[string]any{
				"message": store.UserText(instruction(t.inputs), now), "provenance": map[string]any{"authority": "instruction", "actor": actor(first.Author)}}})
	}
	if t.waiting != nil {
		// Resumed after an authorization: the tool runs now.
		call := t.waiting
		t.waiting = nil
		if !a.runTool(ctx, t, conv, *call) {
			return
		}
	}
	slice := time.Now()
	for {
		if ctx.Err() != nil {
			a.cancelled(t, conv)
			return
		}
		messages, err := a.modelHistory(a.ctx, t.conv)
		if err != nil {
			a.end(ctx, t, conv, err)
			return
		}
		tools := a.tools()
		if t.calls >= a.cfg.ToolCallLimit {
			tools = nil // the limit is reached: the model must answer
		}
		msg, err := a.gw.Step(ctx, a.systemPrompt(), messages, tools)
		t.steps++
		if err != nil || ctx.Err() != nil {
			a.end(ctx, t, conv, err)
			return
		}
		pi, calls := piAssistant(msg, a.cfg.AgentModel)
		for _, c := range calls {
			a.append(t.conv, store.Row{Type: "tool_execution_started", Payload: map[string]any{"toolName": c.Name, "toolCallId": c.ID}})
		}
		row := store.Row{Type: "assistant_message", SchemaVersion: 2, Payload: map[string]any{
			"model": a.cfg.AgentModel, "usage": pi.Usage, "message": store.Encode(pi), "provider": "vercel-ai-gateway"}}
		if len(calls) == 0 {
			row.Key = "message:" + t.turnID + ":assistant:1:agent"
			a.append(t.conv, row)
			a.finish(t, conv, text(pi), "success")
			return
		}
		a.append(t.conv, row)
		for _, c := range calls {
			t.calls++
			if !a.runTool(ctx, t, conv, c) {
				return
			}
		}
		// Past its slice the turn yields, as Junior's turns do before a
		// serverless deadline: its rest is queued and goes on in a new
		// slice.
		if time.Since(slice) > a.cfg.TurnSlice {
			a.pause(t)
			return
		}
	}
}

// runTool runs one call and writes its result; false means the turn
// stopped there (parked for an authorization, or cancelled).
func (a *App) runTool(ctx context.Context, t *turnState, conv store.Conversation, c toolCall) bool {
	out, isErr, authz := a.callTool(ctx, t, conv, c)
	if authz != "" {
		t.waiting = &c
		a.park(t, authz)
		return false
	}
	if ctx.Err() != nil {
		a.cancelled(t, conv)
		return false
	}
	res := store.ToolResult{ToolCallID: c.ID, ToolName: c.Name, Content: []store.Content{{Type: "text", Text: out}},
		IsError: isErr, Timestamp: time.Now().UnixMilli()}
	a.append(t.conv, store.Row{Type: "tool_result", SchemaVersion: 2, Payload: map[string]any{"message": store.Encode(res), "toolCallId": c.ID}})
	return true
}

// finish delivers the reply and closes the turn: the inputs updated and
// handled, the visible reply and its handled row, the terminal row.
func (a *App) finish(t *turnState, conv store.Conversation, reply, outcome string) {
	a.deliver(t, conv, reply, store.Row{Type: "turn_completed", Key: "turn:" + t.turnID + ":terminal",
		Payload: map[string]any{"turnId": t.turnID, "outcome": outcome}})
}

// end closes a turn that stopped on err or on its context: cancelled by
// a stop or the agent's shutdown, timed out, or failed.
func (a *App) end(ctx context.Context, t *turnState, conv store.Conversation, err error) {
	if ctx.Err() != nil {
		a.cancelled(t, conv)
		return
	}
	a.fail(t, conv, "model_execution_failed", err)
}

func (a *App) fail(t *turnState, conv store.Conversation, code string, err error) {
	a.logf(slog.LevelWarn, "turn %s failed: %v", t.turnID, err)
	if !t.started {
		return
	}
	a.deliver(t, conv, failureReply, store.Row{Type: "turn_failed", Key: "turn:" + t.turnID + ":terminal",
		Payload: map[string]any{"turnId": t.turnID, "failureCode": code}})
}

func (a *App) cancelled(t *turnState, conv store.Conversation) {
	if errors.Is(context.Cause(a.ctx), context.Canceled) && a.ctx.Err() != nil {
		return // the agent is stopping: the turn stays open, as after a crash
	}
	if !a.takeStopping(t) {
		a.fail(t, conv, "agent_run_failed", fmt.Errorf("turn timed out after %s", a.cfg.TurnTimeout))
		return
	}
	a.finish(t, conv, stopReply, "cancelled")
}

func (a *App) deliver(t *turnState, conv store.Conversation, reply string, terminal store.Row) {
	a.closeOpenCalls(t)
	// Slack gets 30 s: a delivery that hangs must not keep the turn open.
	ctx, cancel := context.WithTimeout(a.ctx, 30*time.Second)
	defer cancel()
	first := t.inputs[0]
	replyID := t.turnID + ":assistant:1"
	meta := map[string]any{"author": map[string]any{"isBot": true, "userName": a.cfg.BotName}, "source": source(first.Surface)}
	if p := first.Place; p.Channel != "" {
		opts := []slack.MsgOption{slack.MsgOptionText(reply, false)}
		if p.ThreadTS != "" {
			opts = append(opts, slack.MsgOptionTS(p.ThreadTS))
		}
		if ts, err := a.post(ctx, p.Channel, opts...); err != nil {
			a.logf(slog.LevelWarn, "turn %s: chat.postMessage: %v", t.turnID, err)
		} else {
			meta["slackTs"] = ts
		}
		if first.Surface == "slack" {
			a.slack.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
				ChannelID: p.Channel, ThreadTS: p.ThreadTS, Status: ""})
		}
	}
	var rows []store.Row
	for _, in := range t.inputs {
		updated := map[string]any{}
		for k, v := range in.Payload {
			updated[k] = v
		}
		if m, ok := in.Payload["meta"].(map[string]any); ok {
			mm := map[string]any{}
			for k, v := range m {
				if k != "replied" {
					mm[k] = v
				}
			}
			updated["meta"] = mm
		}
		b, _ := json.Marshal(updated)
		sum := sha256.Sum256(b)
		rows = append(rows,
			store.Row{Type: "message_updated", Key: "message:" + in.MessageID + ":update:" + hex.EncodeToString(sum[:16]), Payload: updated},
			store.Row{Type: "message_handled", Key: "message:" + in.MessageID + ":handled", Payload: map[string]any{"messageId": in.MessageID}})
	}
	rows = append(rows,
		store.Row{Type: "message", Key: "message:" + replyID, Payload: map[string]any{"meta": meta, "role": "assistant", "text": reply, "messageId": replyID}},
		store.Row{Type: "message_handled", Key: "message:" + replyID + ":handled", Payload: map[string]any{"messageId": replyID}},
		terminal)
	a.append(t.conv, rows...)
}

// post sends a message, waiting out Slack's rate limit (Retry-After)
// while ctx lasts, as Slack asks clients to.
func (a *App) post(ctx context.Context, channel string, opts ...slack.MsgOption) (string, error) {
	for {
		_, ts, err := a.slack.PostMessageContext(ctx, channel, opts...)
		var limited *slack.RateLimitedError
		if !errors.As(err, &limited) {
			return ts, err
		}
		a.logf(slog.LevelInfo, "chat.postMessage is rate limited; retrying in %s", limited.RetryAfter)
		select {
		case <-time.After(limited.RetryAfter):
		case <-ctx.Done():
			return "", err
		}
	}
}

// closeOpenCalls answers each tool call of the history that has no
// result (the turn stopped while it ran) with an error result, so the
// next model request is one a provider takes: every tool_use answered.
func (a *App) closeOpenCalls(t *turnState) {
	items, err := a.currentHistory(a.ctx, t.conv)
	if err != nil {
		a.logf(slog.LevelError, "%v", err)
		return
	}
	answered := map[string]bool{}
	var open []toolCall
	for _, it := range items {
		switch it.Type {
		case "tool_result":
			var r store.ToolResult
			json.Unmarshal([]byte(it.Message), &r)
			answered[r.ToolCallID] = true
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
		res := store.ToolResult{ToolCallID: c.ID, ToolName: c.Name, IsError: true, Timestamp: time.Now().UnixMilli(),
			Content: []store.Content{{Type: "text", Text: "The turn ended before this tool finished."}}}
		rows = append(rows, store.Row{Type: "tool_result", SchemaVersion: 2, Payload: map[string]any{"message": store.Encode(res), "toolCallId": c.ID}})
	}
	if len(rows) > 0 {
		a.append(t.conv, rows...)
	}
}

func source(surface string) string {
	switch surface {
	case "api":
		return "web"
	default:
		return surface
	}
}

func (a *App) append(id string, rows ...store.Row) {
	if _, err := a.st.Append(a.ctx, id, rows...); err != nil {
		a.logf(slog.LevelError, "%v", err)
	}
}

func instructionText(in []input) string {
	var parts []string
	for _, i := range in {
		parts = append(parts, i.Text)
	}
	return strings.Join(parts, "\n\n")
}

// instruction is the current-instruction block, Junior's shape.
func instruction(in []input) string {
	var b strings.Builder
	for _, i := range in {
		if i.Surface == "slack" {
			fmt.Fprintf(&b, "<current-instruction author_id=%q author_name=%q slack_ts=%q>\n%s\n</current-instruction>\n",
				i.Author.UserID, i.Author.FullName, i.MessageID, xmlEscape(i.Text))
		} else {
			fmt.Fprintf(&b, "<current-instruction>\n%s\n</current-instruction>\n", xmlEscape(i.Text))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (a *App) runtimeContext(conv store.Conversation, first input) string {
	return "<runtime-turn-context>\n\nRuntime context for this request. Treat these blocks as trusted runtime facts.\n\n" +
		"<context><actor>- user_name: " + first.Author.UserName + "\n- user_id: " + first.Author.UserID + "</actor></context>\n" +
		"<runtime>- surface: " + source(first.Surface) + "\n- conversation_id: " + conv.ID + "\n- time: " +
		time.Now().UTC().Format(time.RFC3339) + "</runtime>\n\n</runtime-turn-context>"
}

func actor(au author) map[string]any {
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

func text(pi store.Assistant) string {
	var parts []string
	for _, c := range pi.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
