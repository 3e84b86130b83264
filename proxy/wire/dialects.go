package wire

import (
	"strconv"

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
		p.usage(j.Get("message.usage"), "input_tokens", "output_tokens")
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
		p.usage(j.Get("usage"), "input_tokens", "output_tokens")
	case "message_stop":
		p.finish()
	case "error":
		p.streamError(j.Get("error"))
	}
}

// usage takes the token counts present in u; missing ones stay as they
// were, since later Anthropic events repeat only what changed.
func (p *Parser) usage(u gjson.Result, in, out string) {
	if v := u.Get(in); v.Type == gjson.Number {
		p.inputTokens = int(v.Int())
	}
	if v := u.Get(out); v.Type == gjson.Number {
		p.outputTokens = int(v.Int())
	}
}

// chatChunk handles one OpenAI Chat Completions chunk, tolerating the
// OpenAI-compatible servers that omit or repeat tool call indexes or send
// the name after the arguments.
func (p *Parser) chatChunk(j gjson.Result) {
	if e := j.Get("error"); e.IsObject() {
		p.streamError(e)
		return
	}
	p.usage(j.Get("usage"), "prompt_tokens", "completion_tokens")
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
// incomplete.
func responsesFinish(r gjson.Result) Finish {
	reason := r.Get("status").String()
	if why := r.Get("incomplete_details.reason").String(); why != "" {
		reason = why
	}
	return Finish{Reason: reason, InputTokens: int(r.Get("usage.input_tokens").Int()), OutputTokens: int(r.Get("usage.output_tokens").Int())}
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
		if v.IsObject() {
			v = v.Get("total")
		}
		n, _ := strconv.Atoi(v.Raw)
		return n
	}
	return Finish{Reason: reason.String(), InputTokens: count(j.Get("usage.inputTokens")), OutputTokens: count(j.Get("usage.outputTokens"))}
}
