package wire

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
)

// maxBuffer bounds what a Parser keeps: one SSE event, or a whole JSON
// body. Beyond it the Parser stops reading (the stream itself is not
// touched) and reports it once.
const maxBuffer = 16 << 20

// Parser reads one model response body as it arrives. Write feeds it
// bytes in any pieces; Close says the body ended. Events go to the emit
// function given to NewParser, in order, from the goroutine that calls
// Write or Close. A Parser is not safe for concurrent use.
type Parser struct {
	d      Dialect
	status int
	sse    bool
	emit   func(Event)

	buf      []byte // SSE: the partial line; otherwise the body
	event    string // SSE: the current event's name
	data     []byte // SSE: the current event's data
	hasData  bool
	stopped  bool // over maxBuffer, or after an error status
	finished bool // the dialect's end was seen

	// Dialect state.
	calls  []*call
	cur    int // OpenAI Chat: the slot a fragment without index continues
	reason string
	usage  tokens
}

// tokens is the usage a stream has reported so far, as its dialect
// counts it: Anthropic's input excludes the cache, the others' include it.
type tokens struct {
	input, output, cacheRead, cacheWrite int
	server                               map[string]int
}

// call is a tool call being assembled.
type call struct {
	key      string // block index, chat index, or item id
	id, name string
	args     []byte
	tool     bool // Anthropic: the block is a tool_use
	emitted  bool
}

// NewParser returns a Parser for a response in dialect d with the given
// status and Content-Type, that hands each Event to emit.
func NewParser(d Dialect, status int, contentType string, emit func(Event)) *Parser {
	return &Parser{d: d, status: status, emit: emit, cur: -1,
		sse: status < 300 && strings.HasPrefix(strings.TrimSpace(strings.ToLower(contentType)), "text/event-stream")}
}

// Write feeds the next bytes of the body. It never fails.
func (p *Parser) Write(b []byte) (int, error) {
	if p.stopped {
		return len(b), nil
	}
	if len(p.buf)+len(b) > maxBuffer {
		p.stopped = true
		p.buf, p.data = nil, nil
		p.emit(Event{Kind: KindError, Error: &Error{Status: p.status, Type: "unparsed",
			Message: "agentvcr: a response event is over 16 MiB; progress for this response stops here"}})
		return len(b), nil
	}
	if !p.sse {
		p.buf = append(p.buf, b...)
		return len(b), nil
	}
	// Lines are cut where they end; only the last, partial one is kept.
	rest := b
	if len(p.buf) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.buf = append(p.buf, b...)
			return len(b), nil
		}
		p.buf = append(p.buf, b[:i]...)
		p.line(p.buf)
		p.buf = p.buf[:0]
		rest = b[i+1:]
	}
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		p.line(rest[:i])
		rest = rest[i+1:]
	}
	p.buf = append(p.buf, rest...)
	return len(b), nil
}

// line handles one SSE line, without its newline.
func (p *Parser) line(l []byte) {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	if len(l) == 0 {
		p.dispatch()
		return
	}
	field, value, _ := bytes.Cut(l, []byte{':'})
	value = bytes.TrimPrefix(value, []byte{' '})
	switch string(field) {
	case "data":
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		p.event = string(value)
	}
}

// dispatch handles the SSE event the blank line ended.
func (p *Parser) dispatch() {
	if !p.hasData {
		p.event = ""
		return
	}
	data := p.data
	p.data, p.hasData = p.data[:0], false
	name := p.event
	p.event = ""
	if p.finished {
		return
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		if p.d == OpenAIChat {
			p.chatEnd()
		}
		return
	}
	if !gjson.ValidBytes(data) {
		return
	}
	j := gjson.ParseBytes(data)
	switch p.d {
	case Anthropic:
		p.anthropicEvent(name, j)
	case OpenAIChat:
		p.chatChunk(j)
	case OpenAIResponses:
		p.responsesEvent(j)
	case AISDK:
		p.aisdkPart(j)
	}
}

// Close says the body ended (or was cut). It emits what the body held
// and, for a stream that ended before its finish, an error event.
func (p *Parser) Close() {
	if p.stopped {
		return
	}
	p.stopped = true
	if !p.sse {
		p.whole(p.buf)
		p.buf = nil
		return
	}
	if len(p.buf) > 0 {
		p.line(p.buf)
	}
	p.dispatch()
	p.buf, p.data = nil, nil
	if p.finished {
		return
	}
	if p.d == OpenAIChat && p.reason != "" {
		p.chatEnd()
		return
	}
	p.emit(Event{Kind: KindError, Error: &Error{Status: p.status, Type: "stream_cut",
		Message: "the stream ended before the model's finish"}})
}

// whole handles a body that is not a stream: a JSON result or an error.
func (p *Parser) whole(body []byte) {
	j := gjson.ParseBytes(body)
	if p.status >= 300 || !j.IsObject() {
		e := &Error{Status: p.status}
		switch obj := j.Get("error"); {
		case p.status < 300:
			e.Type, e.Message = "unparsed", "the response is not a JSON object"
		case obj.Get("type").Exists():
			e = errorOf(obj, p.status)
		case obj.Type == gjson.String:
			e.Message = obj.String()
		default:
			e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		p.emit(Event{Kind: KindError, Error: e})
		return
	}
	var f Finish
	switch p.d {
	case Anthropic:
		for _, c := range j.Get("content").Array() {
			switch c.Get("type").String() {
			case "text":
				p.text(c.Get("text").String())
			case "tool_use":
				p.emit(Event{Kind: KindToolCall, Tool: toolCall(c.Get("id").String(), c.Get("name").String(), c.Get("input").Raw)})
			}
		}
		var u tokens
		u.anthropic(j.Get("usage"))
		f = u.finish(j.Get("stop_reason").String(), Anthropic)
	case OpenAIChat:
		m := j.Get("choices.0.message")
		p.text(m.Get("content").String())
		for _, c := range m.Get("tool_calls").Array() {
			p.emit(Event{Kind: KindToolCall, Tool: toolCall(c.Get("id").String(), c.Get("function.name").String(), c.Get("function.arguments").String())})
		}
		var u tokens
		u.chat(j.Get("usage"))
		f = u.finish(j.Get("choices.0.finish_reason").String(), OpenAIChat)
	case OpenAIResponses:
		p.responsesOutput(j)
		f = responsesFinish(j)
	case AISDK:
		for _, c := range j.Get("content").Array() {
			switch c.Get("type").String() {
			case "text":
				p.text(c.Get("text").String())
			case "tool-call":
				p.emit(Event{Kind: KindToolCall, Tool: toolCall(c.Get("toolCallId").String(), c.Get("toolName").String(), c.Get("input").String())})
			}
		}
		f = aisdkFinish(j)
	}
	p.finishWith(f)
}

func (p *Parser) text(s string) {
	if s != "" {
		p.emit(Event{Kind: KindText, Text: s})
	}
}

// finish emits the finish from the state gathered so far.
func (p *Parser) finish() {
	p.finishWith(p.usage.finish(p.reason, p.d))
}

// finishWith emits f as the response's finish.
func (p *Parser) finishWith(f Finish) {
	p.finished = true
	f.Truncated = truncated(f.Reason)
	p.emit(Event{Kind: KindFinish, Finish: &f})
}

// streamError emits an error that came inside a stream; the stream is
// over as far as progress goes.
func (p *Parser) streamError(e gjson.Result) {
	p.finished = true
	p.emit(Event{Kind: KindError, Error: errorOf(e, p.status)})
}

// errorOf reads a provider's error object: its type (or, failing that,
// its code) and message.
func errorOf(e gjson.Result, status int) *Error {
	typ := e.Get("type").String()
	if typ == "" {
		typ = e.Get("code").String()
	}
	return &Error{Status: status, Type: typ, Message: e.Get("message").String()}
}

// find returns the call with key, or nil.
func (p *Parser) find(key string) *call {
	for _, c := range p.calls {
		if c.key == key {
			return c
		}
	}
	return nil
}

// slot returns the call with key, adding it when new.
func (p *Parser) slot(key string) *call {
	if c := p.find(key); c != nil {
		return c
	}
	c := &call{key: key}
	p.calls = append(p.calls, c)
	return c
}

// emitCall emits a call once.
func (p *Parser) emitCall(c *call) {
	if c.emitted {
		return
	}
	c.emitted = true
	p.emit(Event{Kind: KindToolCall, Tool: toolCall(c.id, c.name, string(c.args))})
}
