package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

func TestCutAtReplyJuniorRecording(t *testing.T) {
	rec, err := ReadFile(filepath.Join("testdata", "launch-planning.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		reply   string
		through int64 // the fork copies seq 0 through this
	}{
		{"turn_api-msg_0c3e1e9a4d97bb760f0656d0:assistant:1", 13},
		{"turn_api-msg_d9e0b97e7ec457e879680bc9:assistant:1", 26},
		{"turn_api-msg_8dd7ea11819bfdfdd41fac3e:assistant:1", 36},
	}
	for _, tt := range tests {
		t.Run(tt.reply, func(t *testing.T) {
			cut, err := CutAtReply(rec, tt.reply, forkSkips)
			if err != nil {
				t.Fatal(err)
			}
			if want := seqRange(0, tt.through); !slices.Equal(seqs(cut.Events), want) {
				t.Fatalf("seqs %v; want %v", seqs(cut.Events), want)
			}
			for i, e := range cut.Events {
				if string(e.Payload) != string(rec.Events[i].Payload) {
					t.Fatalf("seq %d: payload changed", e.Seq)
				}
			}
		})
	}
}

// row builds an event; payload is a Go value marshalled to JSON.
func row(seq int64, typ string, hv int64, key string, payload any) Event {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	e := Event{Seq: seq, Type: typ, HistoryVersion: hv, SchemaVersion: 1, CreatedAtMs: 1000 - seq, Payload: b}
	if key != "" {
		e.IdempotencyKey = &key
	}
	switch typ {
	case "user_message", "assistant_message", "tool_result":
		e.SchemaVersion = 2
	}
	return e
}

// v2 encodes a model message the way schema-version-2 payloads hold it.
func v2(msg map[string]any, extra ...any) map[string]any {
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	p := map[string]any{"message": string(b)}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return p
}

func assistant(stop string, content ...map[string]any) map[string]any {
	return v2(map[string]any{"content": content, "stopReason": stop})
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
func call(id string) map[string]any {
	return map[string]any{"type": "toolCall", "id": id, "name": "webFetch", "arguments": map[string]any{}}
}

// turn returns the rows of one complete turn starting at seq, with reply r.
func turn(seq, hv int64, n int) []Event {
	msg := fmt.Sprintf("m%d", n)
	tid := "turn_" + msg
	reply := tid + ":assistant:1"
	return []Event{
		row(seq, "message", hv, "message:"+msg, map[string]any{"messageId": msg, "role": "user", "text": "q"}),
		row(seq+1, "turn_started", hv, "turn:"+tid+":started", map[string]any{"turnId": tid}),
		row(seq+2, "user_message", hv, "", v2(map[string]any{"content": []any{text("q")}})),
		row(seq+3, "assistant_message", hv, "", assistant("toolUse", call("c"+msg))),
		row(seq+4, "tool_result", hv, "", v2(map[string]any{"toolCallId": "c" + msg}, "toolCallId", "c"+msg)),
		row(seq+5, "assistant_message", hv, "message:"+reply+":agent", assistant("stop", text("a"))),
		row(seq+6, "message", hv, "message:"+reply, map[string]any{"messageId": reply, "role": "assistant", "text": "a"}),
		row(seq+7, "message_handled", hv, "message:"+msg+":handled", map[string]any{"messageId": msg}),
		row(seq+8, "turn_completed", hv, "turn:"+tid+":terminal", map[string]any{"turnId": tid, "outcome": "success"}),
	}
}

func TestCutAtReplyCopyRules(t *testing.T) {
	var events []Event
	events = append(events, turn(0, 0, 1)...)
	// An uncopied row inside the cut, and a seq gap.
	events = append(events, row(10, "authorization_requested", 0, "", map[string]any{"provider": "github"}))
	// Turn 2: its visible reply lands after the handled marker of turn 1's
	// reply, which arrives late; and a compaction bumps the history version.
	events = append(events, turn(11, 0, 2)...)
	events = append(events,
		row(20, "message_handled", 0, "", map[string]any{"messageId": "turn_m2:assistant:1"}),
		row(21, "message_updated", 0, "", map[string]any{"messageId": "m2", "role": "user", "text": "q2"}),
		row(22, "message", 0, "", map[string]any{"messageId": "m3", "role": "user", "text": "later"}),
		row(23, "message_updated", 0, "", map[string]any{"messageId": "m3"}),
		row(24, "turn_failed", 0, "", map[string]any{"turnId": "turn_m3"}),
		row(25, "compaction", 1, "", map[string]any{"replacementHistory": []any{}}),
		row(26, "structured_event", 1, "", map[string]any{"name": "x"}),
	)
	// Turn 1's completion is recorded late too.
	events[8].Seq = 27

	rec := &Recording{Header: Header{Version: 1, Surface: SurfaceWeb}, Events: events}
	cut, err := CutAtReply(rec, "turn_m2:assistant:1", forkSkips)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 27}
	if got := seqs(cut.Events); !slices.Equal(got, want) {
		t.Fatalf("seqs %v; want %v", got, want)
	}
	for _, e := range cut.Events {
		if e.HistoryVersion != 0 {
			t.Errorf("seq %d: historyVersion %d; want it capped at 0", e.Seq, e.HistoryVersion)
		}
	}
	if len(rec.Events) != len(events) || rec.Events[8].Seq != 27 {
		t.Error("CutAtReply changed its input")
	}
}

func TestCutAtReplyCapsHistoryVersion(t *testing.T) {
	events := turn(0, 0, 1)
	events = append(events, turn(9, 1, 2)...)
	events[17].HistoryVersion = 3 // the turn's terminal row, written after a later compaction
	events[17].Seq = 40
	cut, err := CutAtReply(&Recording{Events: events}, "turn_m2:assistant:1", forkSkips)
	if err != nil {
		t.Fatal(err)
	}
	last := cut.Events[len(cut.Events)-1]
	if last.Seq != 40 || last.HistoryVersion != 1 {
		t.Fatalf("last row seq %d historyVersion %d; want seq 40 capped at 1", last.Seq, last.HistoryVersion)
	}
}

func TestCutAtReplyRefusals(t *testing.T) {
	base := turn(0, 0, 1)
	tests := []struct {
		name   string
		events func() []Event
		reply  string
		want   error
	}{
		{"unknown reply", func() []Event { return base }, "nope", ErrReplyNotFound},
		{"boundary is not an assistant message", func() []Event {
			ev := slices.Clone(base)
			ev[5].Type = "tool_result"
			return ev
		}, "turn_m1:assistant:1", ErrNotCompletedReply},
		{"reply stopped for tools", func() []Event {
			ev := slices.Clone(base)
			ev[5] = row(5, "assistant_message", 0, "message:turn_m1:assistant:1:agent", assistant("toolUse", call("x")))
			return ev
		}, "turn_m1:assistant:1", ErrNotCompletedReply},
		{"reply with a tool call", func() []Event {
			ev := slices.Clone(base)
			ev[5] = row(5, "assistant_message", 0, "message:turn_m1:assistant:1:agent", assistant("stop", text("a"), call("x")))
			return ev
		}, "turn_m1:assistant:1", ErrNotCompletedReply},
		{"tool call without result", func() []Event {
			ev := slices.Clone(base)
			return append(ev[:4:4], ev[5:]...)
		}, "turn_m1:assistant:1", ErrUnfinishedToolCalls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CutAtReply(&Recording{Events: tt.events()}, tt.reply, forkSkips)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v; want %v", err, tt.want)
			}
			var ce *CutError
			if !errors.As(err, &ce) || ce.MessageID != tt.reply {
				t.Fatalf("error %T %v; want *CutError for %q", err, err, tt.reply)
			}
		})
	}
}

func TestCutAtReplyCountsCompactionHistory(t *testing.T) {
	// After a compaction, the projection starts from its replacement
	// history: a tool call there without a result is still open.
	events := []Event{
		row(0, "compaction", 1, "", map[string]any{"replacementHistory": []any{
			map[string]any{"item": map[string]any{"type": "assistant_message", "message": `{"content":[{"type":"toolCall","id":"old"}]}`}},
		}}),
		row(1, "assistant_message", 1, "message:r:agent", assistant("stop", text("done"))),
	}
	_, err := CutAtReply(&Recording{Events: events}, "r", forkSkips)
	if !errors.Is(err, ErrUnfinishedToolCalls) {
		t.Fatalf("error %v; want ErrUnfinishedToolCalls", err)
	}
	events[0].Payload = json.RawMessage(`{"replacementHistory":[{"item":{"type":"user_message","message":"{\"content\":[]}"}}]}`)
	if _, err := CutAtReply(&Recording{Events: events}, "r", forkSkips); err != nil {
		t.Fatalf("closed history: %v", err)
	}
}

func seqs(events []Event) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

func seqRange(from, through int64) []int64 {
	var out []int64
	for s := from; s <= through; s++ {
		out = append(out, s)
	}
	return out
}

// forkSkips reports the types Junior's fork never copies, listed here
// apart from the junior profile's list.
func forkSkips(eventType string) bool {
	switch eventType {
	case "authorization_completed", "authorization_requested", "guardian_action_reviewed", "mcp_provider_connected",
		"mcp_provider_connected_unowned", "structured_event", "unknown":
		return true
	}
	return false
}
