package fakeai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// obj is a JSON object whose keys keep the order they are written in, as
// the providers' own encoders write them.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, e := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(e.k)
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// stream writes server-sent events, flushing each. Once the client has
// gone (its request's context ends, or a write fails) it writes nothing
// more, so a long answer nobody reads ends at once.
type stream struct {
	ctx context.Context
	w   http.ResponseWriter
	err error
	seq int // Responses' sequence_number
}

func newStream(ctx context.Context, w http.ResponseWriter) *stream {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &stream{ctx: ctx, w: w}
}

// gone says whether the client has gone, so nothing more is written.
func (s *stream) gone() bool {
	if s.err == nil {
		s.err = s.ctx.Err()
	}
	return s.err != nil
}

func (s *stream) write(text string) {
	if s.gone() {
		return
	}
	if _, s.err = io.WriteString(s.w, text); s.err == nil {
		if f, ok := s.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func (s *stream) event(name string, v any) {
	if s.gone() {
		return
	}
	b, _ := json.Marshal(v)
	line := "data: " + string(b) + "\n\n"
	if name != "" {
		line = "event: " + name + "\n" + line
	}
	s.write(line)
}

// finishing calls done before the last event is written, unless the
// client has gone: an answer cut short is not done.
func (s *stream) finishing(done func()) {
	if !s.gone() {
		done()
	}
}

func (s *stream) done() { s.write("data: [DONE]\n\n") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// pieces splits text into the deltas a stream sends it in: a few words
// each, and at least two when the text has two characters.
func pieces(s string) []string {
	var out []string
	start, n := 0, 0
	for i, r := range s {
		if n >= 8 && (r == ' ' || n >= 16) {
			out = append(out, s[start:i])
			start, n = i, 0
		}
		n++
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	if len(out) == 1 && utf8.RuneCountInString(s) >= 2 {
		half := len(s) / 2
		for !utf8.RuneStart(s[half]) {
			half++
		}
		out = []string{s[:half], s[half:]}
	}
	return out
}

// argPieces splits a tool call's arguments into up to three fragments,
// as models stream them.
func argPieces(b []byte) []string {
	s := string(b)
	var out []string
	for i, start := 1, 0; i <= 3; i++ {
		end := len(s) * i / 3
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		if end > start {
			out = append(out, s[start:end])
			start = end
		}
	}
	return out
}

// tokens estimates a token count: four bytes a token, as providers bill
// English roughly.
func tokens(n int) int { return n/4 + 1 }

func (a *answer) outputTokens() int {
	n := len(a.text)
	for _, c := range a.calls {
		n += len(c.name) + len(c.input)
	}
	return tokens(n)
}

func modelOf(p *Prompt) string {
	if p.Model == "" {
		return "fake-model"
	}
	return p.Model
}

// render writes a as p's dialect answers it, streamed when p asks, and
// calls done just before the last of it is written: once the agent can
// see the answer end, the record says it was written.
func render(ctx context.Context, w http.ResponseWriter, p *Prompt, a answer, id int, done func()) {
	u := Usage{Input: tokens(p.Size), Output: a.outputTokens()}
	if a.usage != nil {
		u = *a.usage
	}
	switch p.Dialect {
	case wire.Anthropic:
		renderAnthropic(ctx, w, p, a, id, u, done)
	case wire.OpenAIChat:
		renderChat(ctx, w, p, a, id, u, done)
	case wire.OpenAIResponses:
		renderResponses(ctx, w, p, a, id, u, done)
	case wire.AISDK:
		renderAISDK(ctx, w, p, a, id, u, done)
	}
}

func renderAnthropic(ctx context.Context, w http.ResponseWriter, p *Prompt, a answer, id int, u Usage, done func()) {
	stop := map[finish]string{finishStop: "end_turn", finishTools: "tool_use", finishLength: "max_tokens"}[a.finish]
	// Anthropic counts the cache apart from input_tokens.
	in := u.Input - u.CacheRead - u.CacheWrite
	usage := obj{{"input_tokens", in}, {"output_tokens", u.Output}, {"cache_creation_input_tokens", u.CacheWrite}, {"cache_read_input_tokens", u.CacheRead}}
	if u.WebSearches > 0 {
		usage = append(usage, kv{"server_tool_use", obj{{"web_search_requests", u.WebSearches}}})
	}
	msgID := fmt.Sprintf("msg_fake_%02d", id)
	if !p.Stream {
		content := []any{}
		if a.text != "" {
			content = append(content, obj{{"type", "text"}, {"text", a.text}})
		}
		for _, c := range a.calls {
			content = append(content, obj{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.input}})
		}
		done()
		writeJSON(w, http.StatusOK, obj{{"id", msgID}, {"type", "message"}, {"role", "assistant"}, {"model", modelOf(p)},
			{"content", content}, {"stop_reason", stop}, {"stop_sequence", nil}, {"usage", usage}})
		return
	}
	s := newStream(ctx, w)
	s.event("message_start", obj{{"type", "message_start"}, {"message", obj{{"id", msgID}, {"type", "message"}, {"role", "assistant"},
		{"model", modelOf(p)}, {"content", []any{}}, {"stop_reason", nil}, {"stop_sequence", nil},
		{"usage", obj{{"input_tokens", in}, {"output_tokens", 1}, {"cache_creation_input_tokens", u.CacheWrite}, {"cache_read_input_tokens", u.CacheRead}}}}}})
	s.event("ping", obj{{"type", "ping"}})
	index := 0
	if a.text != "" {
		s.event("content_block_start", obj{{"type", "content_block_start"}, {"index", index}, {"content_block", obj{{"type", "text"}, {"text", ""}}}})
		for _, t := range pieces(a.text) {
			s.event("content_block_delta", obj{{"type", "content_block_delta"}, {"index", index}, {"delta", obj{{"type", "text_delta"}, {"text", t}}}})
		}
		s.event("content_block_stop", obj{{"type", "content_block_stop"}, {"index", index}})
		index++
	}
	for _, c := range a.calls {
		s.event("content_block_start", obj{{"type", "content_block_start"}, {"index", index},
			{"content_block", obj{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", obj{}}}}})
		for _, part := range append([]string{""}, argPieces(c.input)...) {
			s.event("content_block_delta", obj{{"type", "content_block_delta"}, {"index", index}, {"delta", obj{{"type", "input_json_delta"}, {"partial_json", part}}}})
		}
		s.event("content_block_stop", obj{{"type", "content_block_stop"}, {"index", index}})
		index++
	}
	final := obj{{"output_tokens", u.Output}}
	if u.WebSearches > 0 {
		final = append(final, kv{"server_tool_use", obj{{"web_search_requests", u.WebSearches}}})
	}
	s.event("message_delta", obj{{"type", "message_delta"}, {"delta", obj{{"stop_reason", stop}, {"stop_sequence", nil}}},
		{"usage", final}})
	s.finishing(done)
	s.event("message_stop", obj{{"type", "message_stop"}})
}

func renderChat(ctx context.Context, w http.ResponseWriter, p *Prompt, a answer, id int, u Usage, done func()) {
	reason := map[finish]string{finishStop: "stop", finishTools: "tool_calls", finishLength: "length"}[a.finish]
	chatID, created := fmt.Sprintf("chatcmpl-fake-%02d", id), time.Now().Unix()
	usage := obj{{"prompt_tokens", u.Input}, {"completion_tokens", u.Output}, {"total_tokens", u.Input + u.Output},
		{"prompt_tokens_details", obj{{"cached_tokens", u.CacheRead}, {"cache_write_tokens", u.CacheWrite}}}}
	if !p.Stream {
		msg := obj{{"role", "assistant"}, {"content", nullable(a.text)}, {"refusal", nil}}
		if len(a.calls) > 0 {
			var calls []any
			for _, c := range a.calls {
				calls = append(calls, obj{{"id", c.id}, {"type", "function"}, {"function", obj{{"name", c.name}, {"arguments", string(c.input)}}}})
			}
			msg = append(msg, kv{"tool_calls", calls})
		}
		done()
		writeJSON(w, http.StatusOK, obj{{"id", chatID}, {"object", "chat.completion"}, {"created", created}, {"model", modelOf(p)},
			{"choices", []any{obj{{"index", 0}, {"message", msg}, {"logprobs", nil}, {"finish_reason", reason}}}}, {"usage", usage}})
		return
	}
	s := newStream(ctx, w)
	chunk := func(delta obj, finish any) obj {
		c := obj{{"id", chatID}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", modelOf(p)},
			{"choices", []any{obj{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}}}}
		if p.IncludeUsage {
			c = append(c, kv{"usage", nil})
		}
		return c
	}
	s.event("", chunk(obj{{"role", "assistant"}, {"content", ""}}, nil))
	for _, t := range pieces(a.text) {
		s.event("", chunk(obj{{"content", t}}, nil))
	}
	for i, c := range a.calls {
		s.event("", chunk(obj{{"tool_calls", []any{obj{{"index", i}, {"id", c.id}, {"type", "function"},
			{"function", obj{{"name", c.name}, {"arguments", ""}}}}}}}, nil))
		for _, part := range argPieces(c.input) {
			s.event("", chunk(obj{{"tool_calls", []any{obj{{"index", i}, {"function", obj{{"arguments", part}}}}}}}, nil))
		}
	}
	s.event("", chunk(obj{}, reason))
	if p.IncludeUsage {
		s.event("", obj{{"id", chatID}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", modelOf(p)},
			{"choices", []any{}}, {"usage", usage}})
	}
	s.finishing(done)
	s.done()
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func renderResponses(ctx context.Context, w http.ResponseWriter, p *Prompt, a answer, id int, u Usage, done func()) {
	respID, created := fmt.Sprintf("resp_fake_%02d", id), time.Now().Unix()
	msgID := fmt.Sprintf("msg_fake_%02d", id)
	status := "completed"
	var incomplete any
	if a.finish == finishLength {
		status, incomplete = "incomplete", obj{{"reason", "max_output_tokens"}}
	}
	usage := obj{{"input_tokens", u.Input}, {"input_tokens_details", obj{{"cached_tokens", u.CacheRead}, {"cache_write_tokens", u.CacheWrite}}},
		{"output_tokens", u.Output}, {"output_tokens_details", obj{{"reasoning_tokens", 0}}}, {"total_tokens", u.Input + u.Output}}
	message := func(text, itemStatus string) obj {
		content := []any{}
		if text != "" || itemStatus == "completed" || itemStatus == "incomplete" {
			content = append(content, obj{{"type", "output_text"}, {"text", text}, {"annotations", []any{}}})
		}
		return obj{{"type", "message"}, {"id", msgID}, {"status", itemStatus}, {"role", "assistant"}, {"content", content}}
	}
	call := func(c sentCall, args, itemStatus string) obj {
		return obj{{"type", "function_call"}, {"id", c.itemID}, {"call_id", c.id}, {"name", c.name}, {"arguments", args}, {"status", itemStatus}}
	}
	itemStatus := "completed"
	if a.finish == finishLength {
		itemStatus = "incomplete"
	}
	var output []any
	for i := range u.WebSearches {
		output = append(output, obj{{"type", "web_search_call"}, {"id", fmt.Sprintf("ws_fake_%02d_%d", id, i)}, {"status", "completed"}})
	}
	if a.text != "" || len(a.calls) == 0 {
		output = append(output, message(a.text, itemStatus))
	}
	for _, c := range a.calls {
		output = append(output, call(c, string(c.input), "completed"))
	}
	response := func(status string, output []any, usage any) obj {
		return obj{{"id", respID}, {"object", "response"}, {"created_at", created}, {"status", status}, {"model", modelOf(p)},
			{"output", output}, {"incomplete_details", incomplete}, {"usage", usage}}
	}
	if !p.Stream {
		done()
		writeJSON(w, http.StatusOK, response(status, output, usage))
		return
	}
	s := newStream(ctx, w)
	ev := func(typ string, fields ...kv) {
		e := obj{{"type", typ}, {"sequence_number", s.seq}}
		s.seq++
		s.event(typ, append(e, fields...))
	}
	begun := obj{{"id", respID}, {"object", "response"}, {"created_at", created}, {"status", "in_progress"}, {"model", modelOf(p)},
		{"output", []any{}}, {"usage", nil}}
	ev("response.created", kv{"response", begun})
	ev("response.in_progress", kv{"response", begun})
	index := u.WebSearches // the searches' items come first
	if a.text != "" || len(a.calls) == 0 {
		ev("response.output_item.added", kv{"output_index", index}, kv{"item", message("", "in_progress")})
		part := obj{{"type", "output_text"}, {"text", ""}, {"annotations", []any{}}}
		ev("response.content_part.added", kv{"item_id", msgID}, kv{"output_index", index}, kv{"content_index", 0}, kv{"part", part})
		for _, t := range pieces(a.text) {
			ev("response.output_text.delta", kv{"item_id", msgID}, kv{"output_index", index}, kv{"content_index", 0}, kv{"delta", t}, kv{"logprobs", []any{}})
		}
		ev("response.output_text.done", kv{"item_id", msgID}, kv{"output_index", index}, kv{"content_index", 0}, kv{"text", a.text}, kv{"logprobs", []any{}})
		ev("response.content_part.done", kv{"item_id", msgID}, kv{"output_index", index}, kv{"content_index", 0},
			kv{"part", obj{{"type", "output_text"}, {"text", a.text}, {"annotations", []any{}}}})
		ev("response.output_item.done", kv{"output_index", index}, kv{"item", message(a.text, itemStatus)})
		index++
	}
	for _, c := range a.calls {
		ev("response.output_item.added", kv{"output_index", index}, kv{"item", call(c, "", "in_progress")})
		for _, part := range argPieces(c.input) {
			ev("response.function_call_arguments.delta", kv{"item_id", c.itemID}, kv{"output_index", index}, kv{"delta", part})
		}
		ev("response.function_call_arguments.done", kv{"item_id", c.itemID}, kv{"output_index", index}, kv{"name", c.name}, kv{"arguments", string(c.input)})
		ev("response.output_item.done", kv{"output_index", index}, kv{"item", call(c, string(c.input), "completed")})
		index++
	}
	s.finishing(done)
	if status == "incomplete" {
		ev("response.incomplete", kv{"response", response(status, output, usage)})
		return
	}
	ev("response.completed", kv{"response", response(status, output, usage)})
}

func renderAISDK(ctx context.Context, w http.ResponseWriter, p *Prompt, a answer, id int, u Usage, done func()) {
	v2 := p.SpecVersion == "2"
	raw := map[finish]string{finishStop: "stop", finishTools: "tool_calls", finishLength: "length"}[a.finish]
	unified := map[finish]string{finishStop: "stop", finishTools: "tool-calls", finishLength: "length"}[a.finish]
	var reason, usage any = obj{{"unified", unified}, {"raw", raw}},
		obj{{"inputTokens", obj{{"total", u.Input}, {"noCache", u.Input - u.CacheRead - u.CacheWrite}, {"cacheRead", u.CacheRead}, {"cacheWrite", u.CacheWrite}}},
			{"outputTokens", obj{{"total", u.Output}, {"text", u.Output}, {"reasoning", 0}}}}
	if v2 {
		reason, usage = unified, obj{{"inputTokens", u.Input}, {"outputTokens", u.Output}, {"totalTokens", u.Input + u.Output}, {"cachedInputTokens", u.CacheRead}}
	}
	genID, stamp := fmt.Sprintf("gen_fake_%02d", id), time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	if !p.Stream {
		content := []any{}
		if a.text != "" {
			content = append(content, obj{{"type", "text"}, {"text", a.text}})
		}
		for _, c := range a.calls {
			content = append(content, obj{{"type", "tool-call"}, {"toolCallId", c.id}, {"toolName", c.name}, {"input", string(c.input)}})
		}
		done()
		writeJSON(w, http.StatusOK, obj{{"content", content}, {"finishReason", reason}, {"usage", usage}, {"warnings", []any{}},
			{"response", obj{{"id", genID}, {"modelId", modelOf(p)}, {"timestamp", stamp}}}})
		return
	}
	s := newStream(ctx, w)
	s.event("", obj{{"type", "stream-start"}, {"warnings", []any{}}})
	s.event("", obj{{"type", "response-metadata"}, {"id", genID}, {"modelId", modelOf(p)}, {"timestamp", stamp}})
	if a.text != "" {
		textID := "txt_" + strconv.Itoa(id)
		s.event("", obj{{"type", "text-start"}, {"id", textID}})
		for _, t := range pieces(a.text) {
			s.event("", obj{{"type", "text-delta"}, {"id", textID}, {"delta", t}})
		}
		s.event("", obj{{"type", "text-end"}, {"id", textID}})
	}
	for _, c := range a.calls {
		s.event("", obj{{"type", "tool-input-start"}, {"id", c.id}, {"toolName", c.name}})
		for _, part := range argPieces(c.input) {
			s.event("", obj{{"type", "tool-input-delta"}, {"id", c.id}, {"delta", part}})
		}
		s.event("", obj{{"type", "tool-input-end"}, {"id", c.id}})
		s.event("", obj{{"type", "tool-call"}, {"toolCallId", c.id}, {"toolName", c.name}, {"input", string(c.input)}})
	}
	s.finishing(done)
	s.event("", obj{{"type", "finish"}, {"finishReason", reason}, {"usage", usage}})
}

// writeError answers status in d's error shape, before any byte of a
// stream. A scripted error lets the client retry as it would; any other
// says not to, so that one mistake is one failure.
func writeError(w http.ResponseWriter, d wire.Dialect, status int, message string, retry bool) {
	if !retry {
		w.Header().Set("x-should-retry", "false")
	}
	switch d {
	case wire.Anthropic:
		typ := "api_error"
		switch {
		case status == 529 || status == 503:
			typ = "overloaded_error"
		case status == 504:
			typ = "timeout_error"
		case status == 429:
			typ = "rate_limit_error"
		case status == 401:
			typ = "authentication_error"
		case status == 403:
			typ = "permission_error"
		case status == 404:
			typ = "not_found_error"
		case status < 500:
			typ = "invalid_request_error"
		}
		writeJSON(w, status, obj{{"type", "error"}, {"error", obj{{"type", typ}, {"message", message}}}, {"request_id", "req_fake"}})
	case wire.AISDK:
		typ := "internal_server_error"
		switch {
		case status == 429:
			typ = "rate_limit_exceeded"
		case status == 401:
			typ = "authentication_error"
		case status < 500:
			typ = "invalid_request_error"
		}
		writeJSON(w, status, obj{{"error", obj{{"message", message}, {"type", typ}, {"param", nil}, {"code", nil}}}, {"generationId", nil}})
	default:
		typ, code := "server_error", any(nil)
		switch {
		case status == 429:
			typ, code = "requests", "rate_limit_exceeded"
		case status == 401:
			typ, code = "invalid_request_error", "invalid_api_key"
		case status < 500:
			typ = "invalid_request_error"
		}
		writeJSON(w, status, obj{{"error", obj{{"message", message}, {"type", typ}, {"param", nil}, {"code", code}}}})
	}
}
