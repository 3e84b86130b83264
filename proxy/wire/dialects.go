package wire

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// anthropicEvent handles one Anthropic Messages stream event.
func (p *Parser) anthropicEvent(name string, j gjson.Result) {
	typ := j.Get("type").String()
	if typ == "" {
		typ = name
	}
	switch typ {
	case "message_start":
		p.usage.anthropic(j.Get("message.usage"))
	case "content_block_start":
		b := j.Get("content_block")
		if b.Get("type").String() == "tool_use" || b.Get("type").String() == "server_tool_use" {
			c := p.slot(j.Get("index").Raw)
			c.tool, c.id, c.name = true, b.Get("id").String(), b.Get("name").String()
		}
	case "content_block_delta":
		d := j.Get("delta")
		switch d.Get("type").String() {
		case "text_delta":
			p.text(d.Get("text").String())
		case "input_json_delta":
			c := p.slot(j.Get("index").Raw)
			c.args = append(c.args, d.Get("partial_json").String()...)
		}
	case "content_block_stop":
		if c := p.find(j.Get("index").Raw); c != nil && c.tool {
			p.emitCall(c)
		}
	case "message_delta":
		if r := j.Get("delta.stop_reason").String(); r != "" {
			p.reason = r
		}
		p.usage.anthropic(j.Get("usage"))
	case "message_stop":
		p.finish()
	case "error":
		p.streamError(j.Get("error"))
	}
}

// set takes v into *n when the usage holds it: later Anthropic events
// repeat only what changed, so a missing count stays as it was.
func set(n *int, v gjson.Result) {
	if v.Type == gjson.Number {
		*n = int(v.Int())
	}
}

// anthropic takes an Anthropic usage object: input_tokens counts only
// what the cache neither read nor wrote.
func (t *tokens) anthropic(u gjson.Result) {
	set(&t.input, u.Get("input_tokens"))
	set(&t.output, u.Get("output_tokens"))
	set(&t.cacheRead, u.Get("cache_read_input_tokens"))
	set(&t.cacheWrite, u.Get("cache_creation_input_tokens"))
	u.Get("server_tool_use").ForEach(func(k, v gjson.Result) bool {
		if name, ok := strings.CutSuffix(k.String(), "_requests"); ok && v.Type == gjson.Number {
			if t.server == nil {
				t.server = map[string]int{}
			}
			t.server[name] = int(v.Int())
		}
		return true
	})
}

// chat takes an OpenAI Chat Completions usage object.
func (t *tokens) chat(u gjson.Result) {
	set(&t.input, u.Get("prompt_tokens"))
	set(&t.output, u.Get("completion_tokens"))
	set(&t.cacheRead, u.Get("prompt_tokens_details.cached_tokens"))
	set(&t.cacheWrite, u.Get("prompt_tokens_details.cache_write_tokens"))
}

// finish is the Finish of a response that ended for reason with the
// usage t, in dialect d's counting.
func (t tokens) finish(reason string, d Dialect) Finish {
	f := Finish{Reason: reason, InputTokens: t.input, OutputTokens: t.output, CacheReadTokens: t.cacheRead,
		CacheWriteTokens: t.cacheWrite, ServerTools: t.server}
	if d == Anthropic {
		f.InputTokens += t.cacheRead + t.cacheWrite
	}
	return f
}

// chatChunk handles one OpenAI Chat Completions chunk, tolerating the
// OpenAI-compatible servers that omit or repeat tool call indexes or send
// the name after the arguments.
func (p *Parser) chatChunk(j gjson.Result) {
	if e := j.Get("error"); e.IsObject() {
		p.streamError(e)
		return
	}
	p.usage.chat(j.Get("usage"))
	for _, ch := range j.Get("choices").Array() {
		if ch.Get("index").Int() != 0 {
			continue
		}
		d := ch.Get("delta")
		p.text(d.Get("content").String())
		for _, t := range d.Get("tool_calls").Array() {
			p.chatFragment(t)
		}
		if r := ch.Get("finish_reason").String(); r != "" {
			p.reason = r
			for _, c := range p.calls {
				p.emitCall(c)
			}
		}
	}
}

func (p *Parser) chatFragment(t gjson.Result) {
	id := t.Get("id").String()
	var c *call
	switch idx := t.Get("index"); {
	case idx.Exists():
		c = p.slot("i" + idx.Raw)
		if id != "" && c.id != "" && id != c.id {
			// A server that reuses one index for parallel calls.
			c = p.slot("i" + idx.Raw + "/" + id)
		}
	case id != "" && (p.cur < 0 || p.calls[p.cur].id != "" && p.calls[p.cur].id != id):
		c = p.slot("id/" + id)
	case p.cur >= 0:
		c = p.calls[p.cur]
	default:
		c = p.slot("first")
	}
	for i, x := range p.calls {
		if x == c {
			p.cur = i
		}
	}
	if id != "" {
		c.id = id
	}
	if n := t.Get("function.name").String(); n != "" {
		c.name = n
	}
	c.args = append(c.args, t.Get("function.arguments").String()...)
}

// chatEnd emits what an ended Chat Completions stream held.
func (p *Parser) chatEnd() {
	for _, c := range p.calls {
		p.emitCall(c)
	}
	p.finish()
}

// responsesEvent handles one OpenAI Responses stream event.
func (p *Parser) responsesEvent(j gjson.Result) {
	switch j.Get("type").String() {
	case "response.output_text.delta":
		p.text(j.Get("delta").String())
	case "response.output_item.added":
		if it := j.Get("item"); it.Get("type").String() == "function_call" {
			c := p.slot(it.Get("id").String())
			c.id, c.name = it.Get("call_id").String(), it.Get("name").String()
		}
	case "response.function_call_arguments.delta":
		c := p.slot(j.Get("item_id").String())
		c.args = append(c.args, j.Get("delta").String()...)
	case "response.function_call_arguments.done":
		c := p.slot(j.Get("item_id").String())
		if a := j.Get("arguments"); a.Exists() {
			c.args = []byte(a.String())
		}
		if n := j.Get("name").String(); n != "" {
			c.name = n
		}
		p.emitCall(c)
	case "response.output_item.done":
		if it := j.Get("item"); it.Get("type").String() == "function_call" {
			c := p.slot(it.Get("id").String())
			if !c.emitted {
				c.id, c.name, c.args = it.Get("call_id").String(), it.Get("name").String(), []byte(it.Get("arguments").String())
			}
			p.emitCall(c)
		}
	case "response.completed", "response.incomplete":
		p.finishWith(responsesFinish(j.Get("response")))
	case "response.failed":
		p.streamError(j.Get("response.error"))
	case "error":
		if e := j.Get("error"); e.IsObject() {
			p.streamError(e)
		} else {
			p.streamError(j)
		}
	}
}

// responsesOutput emits the text and calls of a whole Response.
func (p *Parser) responsesOutput(r gjson.Result) {
	for _, it := range r.Get("output").Array() {
		switch it.Get("type").String() {
		case "message":
			for _, c := range it.Get("content").Array() {
				if c.Get("type").String() == "output_text" {
					p.text(c.Get("text").String())
				}
			}
		case "function_call":
			p.emit(Event{Kind: KindToolCall, Tool: toolCall(it.Get("call_id").String(), it.Get("name").String(), it.Get("arguments").String())})
		}
	}
}

// responsesFinish reads a Response's end: its status, or why it is
// incomplete, its usage, and the tools the provider ran (an output item
// of type web_search_call is a web_search request).
func responsesFinish(r gjson.Result) Finish {
	reason := r.Get("status").String()
	if why := r.Get("incomplete_details.reason").String(); why != "" {
		reason = why
	}
	u := r.Get("usage")
	t := tokens{input: int(u.Get("input_tokens").Int()), output: int(u.Get("output_tokens").Int()),
		cacheRead: int(u.Get("input_tokens_details.cached_tokens").Int()), cacheWrite: int(u.Get("input_tokens_details.cache_write_tokens").Int())}
	for _, it := range r.Get("output").Array() {
		typ := it.Get("type").String()
		if name, ok := strings.CutSuffix(typ, "_call"); ok && typ != "function_call" && typ != "custom_tool_call" {
			if t.server == nil {
				t.server = map[string]int{}
			}
			t.server[name]++
		}
	}
	return t.finish(reason, OpenAIResponses)
}

// aisdkPart handles one AI SDK stream part.
func (p *Parser) aisdkPart(j gjson.Result) {
	switch j.Get("type").String() {
	case "text-delta":
		p.text(j.Get("delta").String())
	case "tool-call":
		p.emit(Event{Kind: KindToolCall, Tool: toolCall(j.Get("toolCallId").String(), j.Get("toolName").String(), j.Get("input").String())})
	case "finish":
		p.finishWith(aisdkFinish(j))
	case "error":
		e := j.Get("error")
		if e.Type == gjson.String {
			p.finished = true
			p.emit(Event{Kind: KindError, Error: &Error{Status: p.status, Message: e.String()}})
			return
		}
		p.streamError(e)
	}
}

// aisdkFinish reads a finish in the V2 (flat) or V3/V4 (nested) shape.
func aisdkFinish(j gjson.Result) Finish {
	reason := j.Get("finishReason")
	if reason.IsObject() {
		reason = reason.Get("unified")
	}
	count := func(v gjson.Result) int {
		n, _ := strconv.Atoi(v.Raw)
		return n
	}
	u := j.Get("usage")
	var t tokens
	if in := u.Get("inputTokens"); in.IsObject() {
		t.input, t.cacheRead, t.cacheWrite = count(in.Get("total")), count(in.Get("cacheRead")), count(in.Get("cacheWrite"))
	} else {
		t.input, t.cacheRead = count(in), count(u.Get("cachedInputTokens"))
	}
	if out := u.Get("outputTokens"); out.IsObject() {
		t.output = count(out.Get("total"))
	} else {
		t.output = count(out)
	}
	return t.finish(reason.String(), AISDK)
}
