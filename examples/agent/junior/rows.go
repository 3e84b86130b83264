package junior

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// Failure codes of a turn_failed row, Junior's.
const (
	// ModelExecutionFailed: the model provider failed.
	ModelExecutionFailed = "model_execution_failed"
	// AgentRunFailed: the turn ran past its time.
	AgentRunFailed = "agent_run_failed"
	// PersistenceFailed: a row of the turn could not be stored.
	PersistenceFailed = "persistence_failed"
)

// Outcomes of a turn_completed row.
const (
	Success   = "success"
	Cancelled = "cancelled"
)

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// TurnID is Junior's: turn_ and the turn's first input's message id,
// made safe.
func TurnID(messageID string) string { return "turn_" + unsafeID.ReplaceAllString(messageID, "_") }

// ReplyID is the message id of a turn's visible reply.
func ReplyID(turnID string) string { return turnID + ":assistant:1" }

// handledKey is the key of a message's message_handled row.
func handledKey(messageID string) string { return "message:" + messageID + ":handled" }

// Message is a visible message: an input (payload is what it shows) or
// the agent's reply.
func Message(messageID string, payload map[string]any) store.Row {
	return store.Row{Type: "message", Key: "message:" + messageID, Payload: payload}
}

// Reply is the agent's visible reply of a turn.
func Reply(turnID, text string, meta map[string]any) store.Row {
	id := ReplyID(turnID)
	return Message(id, map[string]any{"meta": meta, "role": "assistant", "text": text, "messageId": id})
}

// MessageHandled closes a message: the agent has answered it.
func MessageHandled(messageID string) store.Row {
	return store.Row{Type: "message_handled", Key: handledKey(messageID), Payload: map[string]any{"messageId": messageID}}
}

// MessageUpdated is an input's message row as its turn leaves it: the
// same payload without meta.replied, keyed by the new payload's digest.
func MessageUpdated(messageID string, payload map[string]any) store.Row {
	updated := map[string]any{}
	for k, v := range payload {
		updated[k] = v
	}
	if m, ok := payload["meta"].(map[string]any); ok {
		mm := map[string]any{}
		for k, v := range m {
			if k != "replied" {
				mm[k] = v
			}
		}
		updated["meta"] = mm
	}
	sum := sha256.Sum256([]byte(store.Encode(updated)))
	return store.Row{Type: "message_updated", Key: "message:" + messageID + ":update:" + hex.EncodeToString(sum[:16]), Payload: updated}
}

// TurnStarted opens a turn on surface (api, slack, scheduler) for its
// inputs.
func TurnStarted(turnID, surface string, inputIDs []string) store.Row {
	return store.Row{Type: "turn_started", Key: "turn:" + turnID + ":started",
		Payload: map[string]any{"turnId": turnID, "surface": surface, "inputMessageIds": inputIDs}}
}

// Route is the router's choice a turn_routed row keeps.
type Route struct {
	CostUSD                          float64
	ModelID, Profile, ReasoningLevel string
	Confidence                       float64
}

// TurnRouted keeps the router's choice for the turn.
func TurnRouted(turnID string, r Route) store.Row {
	return store.Row{Type: "turn_routed", Key: "turn:" + turnID + ":routed", Payload: map[string]any{
		"source": "router", "turnId": turnID, "costUsd": r.CostUSD, "modelId": r.ModelID,
		"confidence": r.Confidence, "modelProfile": r.Profile, "reasoningLevel": r.ReasoningLevel}}
}

// ContextMessage is the model-history row of the turn's runtime context.
func ContextMessage(text string, ts int64) store.Row {
	return store.Row{Type: "user_message", SchemaVersion: 2, Payload: map[string]any{
		"message": store.UserText(text, ts), "provenance": map[string]any{"authority": "context"}}}
}

// InstructionMessage is the model-history row of the turn's instruction,
// by actor.
func InstructionMessage(text string, ts int64, actor map[string]any) store.Row {
	return store.Row{Type: "user_message", SchemaVersion: 2, Payload: map[string]any{
		"message": store.UserText(text, ts), "provenance": map[string]any{"authority": "instruction", "actor": actor}}}
}

// ToolExecutionStarted marks a tool call the model asked for.
func ToolExecutionStarted(name, callID string) store.Row {
	return store.Row{Type: "tool_execution_started", Payload: map[string]any{"toolName": name, "toolCallId": callID}}
}

// AssistantMessage is a model answer; final marks the turn's last, the
// agent message a fork cuts at (key message:<replyId>:agent).
func AssistantMessage(turnID, model string, pi store.Assistant, final bool) store.Row {
	row := store.Row{Type: "assistant_message", SchemaVersion: 2, Payload: map[string]any{
		"model": model, "usage": pi.Usage, "message": store.Encode(pi), "provider": "vercel-ai-gateway"}}
	if final {
		row.Key = "message:" + ReplyID(turnID) + ":agent"
	}
	return row
}

// ToolResult is what a tool returned to the model.
func ToolResult(res store.ToolResult) store.Row {
	return store.Row{Type: "tool_result", SchemaVersion: 2, Payload: map[string]any{"message": store.Encode(res), "toolCallId": res.ToolCallID}}
}

// TurnCompleted ends a turn with outcome (Success, Cancelled).
func TurnCompleted(turnID, outcome string) store.Row {
	return store.Row{Type: "turn_completed", Key: terminalKey(turnID), Payload: map[string]any{"turnId": turnID, "outcome": outcome}}
}

// TurnFailed ends a turn with a failure code; it shares TurnCompleted's
// key, so whichever is first is the turn's end.
func TurnFailed(turnID, code string) store.Row {
	return store.Row{Type: "turn_failed", Key: terminalKey(turnID), Payload: map[string]any{"turnId": turnID, "failureCode": code}}
}

func terminalKey(turnID string) string { return "turn:" + turnID + ":terminal" }

// AuthorizationRequested records the private link sent to subject.
func AuthorizationRequested(provider, subject, authorizationID string) store.Row {
	return store.Row{Type: "authorization_requested", Payload: map[string]any{
		"kind": "plugin", "provider": provider, "actorId": subject, "authorizationId": authorizationID, "delivery": "private_link_sent"}}
}

// AuthorizationCompleted records the credential the callback stored.
func AuthorizationCompleted(provider, subject, authorizationID string) store.Row {
	return store.Row{Type: "authorization_completed", Key: "authorization:" + authorizationID + ":completed", Payload: map[string]any{
		"kind": "plugin", "provider": provider, "actorId": subject, "authorizationId": authorizationID}}
}

// Compaction replaces the model history with summary: it starts a new
// history_version, as Junior's replaceHistory does. details are the
// numbers that made it.
func Compaction(model, summary string, ts int64, details map[string]any) store.Row {
	item := map[string]any{"type": "user_message", "message": store.UserText("<conversation-summary>\n"+summary+"\n</conversation-summary>", ts),
		"provenance": map[string]any{"authority": "context"}}
	return store.Row{Type: "compaction", SchemaVersion: 2, NewHistory: true, Payload: map[string]any{
		"modelProfile": "fast", "modelId": model, "summary": summary, "details": details,
		"replacementHistory": []any{map[string]any{"item": item}},
	}}
}
