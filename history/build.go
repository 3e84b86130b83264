package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Item is one step of a conversation written from scratch: an input a
// person sent, or the agent's reply to the inputs before it.
type Item struct {
	kind  string // slack_mention, slack_thread_message, web_message, reply
	text  string
	tools []ToolUse
}

// ToolUse is a tool call of a built reply and what the tool returned.
type ToolUse struct {
	Name   string
	Input  any
	Result string
}

// SlackMention is a person mentioning the agent in the thread.
func SlackMention(text string) Item { return Item{kind: "slack_mention", text: text} }

// SlackThreadMessage is a person writing in the thread, without a mention.
func SlackThreadMessage(text string) Item { return Item{kind: "slack_thread_message", text: text} }

// WebMessage is a person's message in a web conversation.
func WebMessage(text string) Item { return Item{kind: "web_message", text: text} }

// Slack says whether the item is a Slack input.
func (it Item) Slack() bool { return strings.HasPrefix(it.kind, "slack_") }

// IsReply says whether the item is the agent's reply (Reply): what a fork
// cuts at. It is how fixture's Conversation.Fork takes the very item a
// test built its history with.
func (it Item) IsReply() bool { return it.kind == "reply" }

// String is the item as the call that made it, for messages:
// history.Reply("March 12.", 1 tool use).
func (it Item) String() string {
	name := map[string]string{"slack_mention": "SlackMention", "slack_thread_message": "SlackThreadMessage",
		"web_message": "WebMessage", "reply": "Reply"}[it.kind]
	if name == "" {
		return "history.Item{}"
	}
	switch len(it.tools) {
	case 0:
		return fmt.Sprintf("history.%s(%q)", name, it.text)
	case 1:
		return fmt.Sprintf("history.%s(%q, 1 tool use)", name, it.text)
	default:
		return fmt.Sprintf("history.%s(%q, %d tool uses)", name, it.text, len(it.tools))
	}
}

// Reply is the agent's turn on the inputs before it: its tool calls, in
// order, then its visible reply.
func Reply(text string, tools ...ToolUse) Item { return Item{kind: "reply", text: text, tools: tools} }

// Author is who writes a built conversation's inputs.
type Author struct {
	Email, UserID, UserName, FullName, TeamID string
}

// Built describes a conversation to Build.
type Built struct {
	// Surface is slack or web.
	Surface Surface
	// Author writes every input; BotName is the agent's.
	Author  Author
	BotName string
	// Model is the agent's model id.
	Model string
	// Start is the first row's time; later rows are a few ms apart.
	Start time.Time
	// NextTS gives a fresh Slack ts for each Slack input.
	NextTS func() string
	// FirstSeq and HistoryVersion place the rows after a conversation's
	// own: the first row's seq, and the history version every row has.
	// Both are zero for a new conversation.
	FirstSeq, HistoryVersion int64
}

var unsafeTurnID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// Build writes the rows real turns write, in the order getsentry/junior
// writes them: for each input its visible message; for each Reply the
// turn's turn_started, turn_routed, the runtime context user_message (in
// a new conversation's first turn only: Junior writes it once), the
// instruction user_message, per tool call tool_execution_started,
// assistant_message and tool_result, the final assistant_message keyed
// …:agent, each input's message_updated and message_handled, the visible
// reply and its message_handled, and turn_completed. No model is called: a test starts
// from this history and only the turn under test calls the model.
func Build(b Built, items ...Item) (*Recording, error) {
	if b.Surface != SurfaceSlack && b.Surface != SurfaceWeb {
		return nil, fmt.Errorf("history: build: surface %q: want slack or web", b.Surface)
	}
	w := &builder{b: b, now: b.Start}
	for i, it := range items {
		switch it.kind {
		case "reply":
			if len(w.pending) == 0 {
				return nil, fmt.Errorf("history: build: item %d: a Reply needs an input before it", i)
			}
			w.reply(it)
		case "web_message":
			if b.Surface != SurfaceWeb {
				return nil, fmt.Errorf("history: build: item %d: a WebMessage in a Slack conversation", i)
			}
			w.input(it)
		default:
			if b.Surface != SurfaceSlack {
				return nil, fmt.Errorf("history: build: item %d: a Slack input in a web conversation", i)
			}
			w.input(it)
		}
	}
	return &Recording{Header: Header{Version: Version, Surface: b.Surface}, Events: w.events}, nil
}

type builder struct {
	b       Built
	now     time.Time
	events  []Event
	pending []builtInput
	// contextWritten is set once a turn has written the runtime context.
	contextWritten bool
}

// seq is the next row's seq.
func (w *builder) seq() int64 { return w.b.FirstSeq + int64(len(w.events)) }

type builtInput struct {
	id      string
	text    string
	payload map[string]any
}

func (w *builder) add(typ string, sv int64, key string, payload any) {
	p := marshal(payload)
	ev := Event{Seq: w.seq(), HistoryVersion: w.b.HistoryVersion, Type: typ, SchemaVersion: sv, CreatedAtMs: w.now.UnixMilli(), Payload: p}
	if key != "" {
		ev.IdempotencyKey = &key
	}
	w.events = append(w.events, ev)
	w.now = w.now.Add(3 * time.Millisecond)
}

func (w *builder) input(it Item) {
	a := w.b.Author
	var id string
	var meta map[string]any
	if w.b.Surface == SurfaceSlack {
		id = w.b.NextTS()
		meta = map[string]any{"author": map[string]any{"fullName": a.FullName, "isBot": false, "userId": a.UserID, "userName": a.UserName},
			"source": "slack", "slackTs": id, "explicitMention": it.kind == "slack_mention", "replied": false}
	} else {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s", a.Email, w.seq(), it.text)))
		id = "api-msg:" + hex.EncodeToString(sum[:12])
		meta = map[string]any{"author": map[string]any{"email": a.Email, "userId": a.UserID, "userName": a.UserName},
			"source": "web", "replied": false, "explicitMention": true}
	}
	payload := map[string]any{"meta": meta, "role": "user", "text": it.text, "messageId": id}
	w.add("message", 1, "message:"+id, payload)
	w.pending = append(w.pending, builtInput{id, it.text, payload})
}

func (w *builder) reply(it Item) {
	b := w.b
	turnID := "turn_" + unsafeTurnID.ReplaceAllString(w.pending[0].id, "_")
	surface, source := "api", "web"
	if b.Surface == SurfaceSlack {
		surface, source = "slack", "slack"
	}
	var ids []string
	for _, in := range w.pending {
		ids = append(ids, in.id)
	}
	w.add("turn_started", 1, "turn:"+turnID+":started", map[string]any{"turnId": turnID, "surface": surface, "inputMessageIds": ids})
	w.add("turn_routed", 1, "turn:"+turnID+":routed", map[string]any{"source": "router", "turnId": turnID, "costUsd": 0,
		"modelId": b.Model, "confidence": 1, "modelProfile": "standard", "reasoningLevel": "low"})
	ts := w.now.UnixMilli()
	if w.b.FirstSeq == 0 && !w.contextWritten {
		// Junior writes the runtime context once, in the first turn: a
		// history placed after a conversation's own has one already.
		w.add("user_message", 2, "", map[string]any{"message": encodeUser(runtimeContext(w.actor()), ts),
			"provenance": map[string]any{"authority": "context"}})
		w.contextWritten = true
	}
	w.add("user_message", 2, "", map[string]any{"message": encodeUser(w.instruction(), ts),
		"provenance": map[string]any{"authority": "instruction", "actor": w.actor()}})
	for _, t := range it.tools {
		id := fmt.Sprintf("call_built_%d", w.seq())
		args := marshal(t.Input)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		w.add("tool_execution_started", 1, "", map[string]any{"toolName": t.Name, "toolCallId": id})
		w.assistant("", []map[string]any{{"type": "toolCall", "id": id, "name": t.Name, "arguments": json.RawMessage(args)}}, "toolUse", "")
		res := marshal(map[string]any{"toolCallId": id, "toolName": t.Name, "content": []any{map[string]any{"type": "text", "text": t.Result}},
			"details": map[string]any{}, "isError": false, "timestamp": w.now.UnixMilli()})
		w.add("tool_result", 2, "", map[string]any{"message": string(res), "toolCallId": id})
	}
	w.assistant(it.text, nil, "stop", "message:"+turnID+":assistant:1:agent")
	for _, in := range w.pending {
		updated := map[string]any{}
		for k, v := range in.payload {
			updated[k] = v
		}
		meta := map[string]any{}
		for k, v := range in.payload["meta"].(map[string]any) {
			if k != "replied" {
				meta[k] = v
			}
		}
		updated["meta"] = meta
		sum := sha256.Sum256(marshal(updated))
		w.add("message_updated", 1, "message:"+in.id+":update:"+hex.EncodeToString(sum[:16]), updated)
		w.add("message_handled", 1, "message:"+in.id+":handled", map[string]any{"messageId": in.id})
	}
	replyID := turnID + ":assistant:1"
	meta := map[string]any{"author": map[string]any{"isBot": true, "userName": b.BotName}, "source": source}
	if b.Surface == SurfaceSlack {
		meta["slackTs"] = b.NextTS() // the ts Slack gave the posted reply
	}
	w.add("message", 1, "message:"+replyID, map[string]any{"meta": meta, "role": "assistant", "text": it.text, "messageId": replyID})
	w.add("message_handled", 1, "message:"+replyID+":handled", map[string]any{"messageId": replyID})
	w.add("turn_completed", 1, "turn:"+turnID+":terminal", map[string]any{"turnId": turnID, "outcome": "success"})
	w.pending = nil
}

func (w *builder) instruction() string {
	var parts []string
	for _, in := range w.pending {
		if w.b.Surface == SurfaceSlack {
			parts = append(parts, currentInstruction(in.text, w.b.Author.UserID, w.b.Author.FullName, in.id))
		} else {
			parts = append(parts, currentInstruction(in.text, "", "", ""))
		}
	}
	return strings.Join(parts, "\n")
}

// runtimeContext is a turn's runtime context text, as Junior writes it
// for actor, without the skills and sandbox sections an agent without
// them leaves out: the header, then the actor's full_name, user_name and
// user_id lines, each when it has one.
func runtimeContext(actor map[string]any) string {
	sections := []string{"<runtime-turn-context>",
		"Runtime context for this request. Treat these blocks as trusted runtime facts; the static system prompt remains authoritative."}
	var lines []string
	for _, f := range []struct{ name, key string }{{"full_name", "fullName"}, {"user_name", "userName"}, {"user_id", "userId"}} {
		if v, _ := actor[f.key].(string); v != "" {
			lines = append(lines, "- "+f.name+": "+xmlEscaper.Replace(v))
		}
	}
	if len(lines) > 0 {
		sections = append(sections, "<context>\n<actor>\n"+strings.Join(lines, "\n")+"\n</actor>\n</context>")
	}
	sections = append(sections, "</runtime-turn-context>")
	return strings.Join(sections, "\n\n")
}

// currentInstruction is the block an input goes to the model in, Junior's:
// on Slack with its author's id and name and its ts, each attribute when
// it has a value.
func currentInstruction(text, authorID, authorName, slackTS string) string {
	open := "<current-instruction"
	for _, a := range []struct{ name, value string }{{"author_id", authorID}, {"author_name", authorName}, {"slack_ts", slackTS}} {
		if a.value != "" {
			open += " " + a.name + `="` + xmlEscaper.Replace(a.value) + `"`
		}
	}
	return open + ">\n" + xmlEscaper.Replace(text) + "\n</current-instruction>"
}

// xmlEscaper escapes text in Junior's prompt blocks, as its escapeXml does.
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func (w *builder) actor() map[string]any {
	a := w.b.Author
	if w.b.Surface == SurfaceSlack {
		return map[string]any{"platform": "slack", "userId": a.UserID, "userName": a.UserName, "teamId": a.TeamID, "fullName": a.FullName, "email": a.Email}
	}
	return map[string]any{"platform": "web", "userId": a.UserID, "email": a.Email, "userName": a.UserName}
}

// assistant writes an assistant_message in Pi's shape, with no usage.
func (w *builder) assistant(text string, calls []map[string]any, stop, key string) {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		content = append(content, c)
	}
	usage := map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cacheWrite1h": 0,
		"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
	raw := map[string]string{"toolUse": "tool_use", "stop": "end_turn"}[stop]
	msg := marshal(map[string]any{"content": content, "api": "anthropic-messages", "provider": "vercel-ai-gateway", "model": w.b.Model,
		"usage": usage, "stopReason": stop, "timestamp": w.now.UnixMilli(), "responseId": fmt.Sprintf("gen_built_%d", w.seq()), "rawStopReason": raw})
	w.add("assistant_message", 2, key, map[string]any{"model": w.b.Model, "usage": usage, "message": string(msg), "provider": "vercel-ai-gateway"})
}

func encodeUser(text string, ts int64) string {
	return string(marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": ts}))
}

// marshal encodes v as Junior's JSON.stringify does, with <, > and &
// written as they are (not as encoding/json's \u003c), so that built
// rows hold the text live ones do. v is the builder's own maps and a
// ToolUse's Input; one that does not encode is written as null.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
