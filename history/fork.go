package history

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The reasons a fork at a reply is refused, as Junior's fork refuses them.
// CutAtReply returns them wrapped in a *CutError.
var (
	// ErrReplyNotFound: no row has the idempotency key message:<id>:agent.
	ErrReplyNotFound = errors.New("no delivered reply with that message id")
	// ErrNotCompletedReply: the reply's row is not an assistant message that
	// stopped with "stop" and asked for no tool.
	ErrNotCompletedReply = errors.New("not a completed reply")
	// ErrUnfinishedToolCalls: the model history at the reply has tool calls
	// without results.
	ErrUnfinishedToolCalls = errors.New("unfinished tool calls")
)

// CutError says why CutAtReply refused a fork point. It unwraps to one of
// ErrReplyNotFound, ErrNotCompletedReply or ErrUnfinishedToolCalls.
type CutError struct {
	MessageID string
	Seq       int64 // seq of the reply's assistant_message row, or -1
	Detail    string
	Err       error
}

func (e *CutError) Error() string {
	s := fmt.Sprintf("fork at reply %q", e.MessageID)
	if e.Seq >= 0 {
		s += fmt.Sprintf(" (seq %d)", e.Seq)
	}
	s += ": " + e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *CutError) Unwrap() error { return e.Err }

// CutAtReply returns the rows that Junior's conversation fork copies when a
// conversation is forked at the delivered reply messageID, in seq order, with
// the header of rec.
//
// The boundary is the assistant_message row with idempotency key
// message:<messageID>:agent; the cutoff is the later of it and the visible
// assistant message row of that reply. Every row up to the cutoff is copied
// except the types the product's fork never copies (those uncopied reports:
// schema.Profile.Uncopied); after the cutoff, the
// message_updated and message_handled rows of copied messages and the
// turn_completed and turn_failed rows of copied turns are copied too, so
// nothing stays open. historyVersion is capped at the highest version among
// the copied rows up to the cutoff, so a later compaction never becomes
// current. Seqs are kept, gaps and all.
func CutAtReply(rec *Recording, messageID string, uncopied func(eventType string) bool) (*Recording, error) {
	events := slices.Clone(rec.Events)
	slices.SortFunc(events, func(a, b Event) int { return cmp.Compare(a.Seq, b.Seq) })

	key := "message:" + messageID + ":agent"
	bi := slices.IndexFunc(events, func(e Event) bool {
		return e.IdempotencyKey != nil && *e.IdempotencyKey == key
	})
	if bi < 0 {
		return nil, &CutError{MessageID: messageID, Seq: -1, Err: ErrReplyNotFound,
			Detail: fmt.Sprintf("no row has idempotency key %q", key)}
	}
	boundary := events[bi]
	refuse := func(err error, detail string, args ...any) (*Recording, error) {
		return nil, &CutError{MessageID: messageID, Seq: boundary.Seq, Err: err, Detail: fmt.Sprintf(detail, args...)}
	}
	if boundary.Type != "assistant_message" {
		return refuse(ErrNotCompletedReply, "its row is a %s, not an assistant_message", boundary.Type)
	}
	msg := modelMessage(boundary)
	if stop := msg.Get("stopReason").String(); stop != "stop" {
		return refuse(ErrNotCompletedReply, "stopReason is %q, not \"stop\"", stop)
	}
	if calls := toolCalls(msg); len(calls) > 0 {
		return refuse(ErrNotCompletedReply, "it asks for tool calls %s", strings.Join(calls, ", "))
	}
	// The boundary itself is in the projection, so it is never empty.
	if open := openToolCalls(events[:bi+1], boundary.HistoryVersion); len(open) > 0 {
		return refuse(ErrUnfinishedToolCalls, "no tool_result for %s", strings.Join(open, ", "))
	}

	cutoff := boundary.Seq
	for _, e := range events {
		if e.Type == "message" && payloadString(e, "messageId") == messageID && e.Seq > cutoff {
			cutoff = e.Seq
		}
	}
	messages := map[string]bool{}
	turns := map[string]bool{}
	var copied []Event
	var maxVersion int64
	for _, e := range events {
		if e.Seq > cutoff || uncopied(e.Type) {
			continue
		}
		switch e.Type {
		case "message":
			messages[payloadString(e, "messageId")] = true
		case "turn_started":
			turns[payloadString(e, "turnId")] = true
		}
		maxVersion = max(maxVersion, e.HistoryVersion)
		copied = append(copied, e)
	}
	for _, e := range events {
		if e.Seq <= cutoff {
			continue
		}
		switch e.Type {
		case "message_updated", "message_handled":
			if messages[payloadString(e, "messageId")] {
				copied = append(copied, e)
			}
		case "turn_completed", "turn_failed":
			if turns[payloadString(e, "turnId")] {
				copied = append(copied, e)
			}
		}
	}
	for i := range copied {
		copied[i].HistoryVersion = min(copied[i].HistoryVersion, maxVersion)
	}
	return &Recording{Header: rec.Header, Events: copied}, nil
}

// openToolCalls walks the model history of version hv up to the end of
// events, as Junior projects it: the replacement history of the last
// compaction or handoff of that version, then the model rows after it. It
// returns the ids of tool calls that have no result, in call order.
func openToolCalls(events []Event, hv int64) (open []string) {
	start := 0
	for i, e := range events {
		if e.HistoryVersion == hv && (e.Type == "compaction" || e.Type == "handoff") {
			start = i
		}
	}
	var calls []string
	results := map[string]bool{}
	add := func(typ string, msg gjson.Result) {
		switch typ {
		case "assistant_message":
			calls = append(calls, toolCalls(msg)...)
		case "tool_result":
			results[msg.Get("toolCallId").String()] = true
		}
	}
	for _, e := range events[start:] {
		if e.HistoryVersion != hv {
			continue
		}
		switch e.Type {
		case "compaction", "handoff":
			gjson.GetBytes(e.Payload, "replacementHistory").ForEach(func(_, r gjson.Result) bool {
				item := r.Get("item")
				add(item.Get("type").String(), decodeMessage(item, 2))
				return true
			})
		case "user_message", "assistant_message", "tool_result":
			add(e.Type, modelMessage(e))
		}
	}
	for _, id := range calls {
		if !results[id] {
			open = append(open, id)
		}
	}
	return open
}

// modelMessage returns the model message a history row holds: the JSON
// document inside payload.message for schema version 2, else the payload.
func modelMessage(e Event) gjson.Result {
	return decodeMessage(gjson.ParseBytes(e.Payload), e.SchemaVersion)
}

func decodeMessage(payload gjson.Result, schemaVersion int64) gjson.Result {
	if m := payload.Get("message"); schemaVersion >= 2 && m.Exists() {
		if m.Type == gjson.String {
			return gjson.Parse(m.Str)
		}
		return m
	}
	return payload
}

// toolCalls returns the ids of the toolCall content items of a model message.
func toolCalls(msg gjson.Result) []string {
	var ids []string
	msg.Get("content").ForEach(func(_, c gjson.Result) bool {
		if c.Get("type").String() == "toolCall" {
			ids = append(ids, c.Get("id").String())
		}
		return true
	})
	return ids
}

func payloadString(e Event, path string) string {
	return gjson.GetBytes(e.Payload, path).String()
}
