package fakeai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// Agent names the prompts a script answers: every field that is set must
// hold. Its name is in every message about it.
type Agent struct {
	Name string `json:"name"`
	// SystemPrefix and SystemContains match the system prompt.
	SystemPrefix   string `json:"systemPrefix,omitempty"`
	SystemContains string `json:"systemContains,omitempty"`
	// Tools match when the prompt offers each of them.
	Tools []string `json:"tools,omitempty"`
	// Model matches the model id.
	Model string `json:"model,omitempty"`
	// Purpose matches what the proxy's model_request event says: "agent"
	// (tools offered), "structured" (a schema asked for) or "text".
	Purpose string `json:"purpose,omitempty"`
	// Match, if set, must also hold.
	Match func(*Prompt) bool `json:"-"`
}

// Validate says what makes the agent unable to match: no name, or a
// purpose no prompt has.
func (a Agent) Validate() error {
	if a.Name == "" {
		return errors.New("fakeai: an agent needs a name")
	}
	switch a.Purpose {
	case "", "agent", "structured", "text":
		return nil
	}
	return fmt.Errorf("fakeai: agent %q: purpose %q matches no prompt: use agent, structured or text", a.Name, a.Purpose)
}

func (a Agent) matches(p *Prompt) bool {
	switch {
	case a.SystemPrefix != "" && !strings.HasPrefix(p.System, a.SystemPrefix),
		a.SystemContains != "" && !strings.Contains(p.System, a.SystemContains),
		a.Model != "" && a.Model != p.Model,
		a.Purpose != "" && a.Purpose != p.Purpose,
		a.Match != nil && !a.Match(p):
		return false
	}
	for _, t := range a.Tools {
		if !slices.ContainsFunc(p.Tools, func(o Tool) bool { return o.Name == t }) {
			return false
		}
	}
	return true
}

// Model is a scripted model provider: an http.Handler that answers the
// dialects the proxy reads, by path, from the responses scripted for each
// agent, and records every call. It is safe for concurrent use.
type Model struct {
	t    testing.TB
	fail func(string)

	mu     sync.Mutex
	agents []*script
	calls  []*Exchange
	failed []string // what went wrong, said again at cleanup
	ids    int
	media  media
}

// script is one agent's queue of answers.
type script struct {
	agent Agent
	queue []entry
}

// entry is a queued answer; after names the tool calls whose results
// the prompt it answers must carry.
type entry struct {
	r     Response
	after []sentCall
}

// New returns a model that reports to t: an unscripted prompt fails t
// when it comes and again at cleanup, as does a script left unused.
func New(t testing.TB) *Model {
	m := &Model{t: t, fail: func(s string) { t.Helper(); t.Error(s) }}
	t.Cleanup(func() {
		for _, s := range m.Problems() {
			t.Error(s)
		}
	})
	return m
}

// NewModel returns a model that tells fail what goes wrong, for hosts
// other than a Go test (the proxy); Problems says it all again.
func NewModel(fail func(string)) *Model { return &Model{fail: fail} }

// Respond queues responses for the agent's next prompts, one each, in
// order. An agent is known by its name: the matcher of its first Respond
// holds.
//
// Agents are tried in the order they were first scripted: the first that
// matches a prompt and has an answer for it takes it, so script the
// narrow agents before a catch-all.
func (m *Model) Respond(a Agent, responses ...Response) {
	if err := a.Validate(); err != nil {
		m.report(err.Error())
	}
	m.mu.Lock()
	s, again := m.scriptLocked(a)
	for _, r := range responses {
		s.queue = append(s.queue, entry{r: r})
	}
	m.mu.Unlock()
	if again {
		m.report(fmt.Sprintf("fakeai: agent %q scripted again with another matcher: the first holds; give the other agent its own name", a.Name))
	}
}

// scriptLocked returns the agent's script, and whether an agent of that
// name was scripted before with another matcher.
func (m *Model) scriptLocked(a Agent) (*script, bool) {
	for _, s := range m.agents {
		if s.agent.Name == a.Name {
			o := s.agent
			differs := o.SystemPrefix != a.SystemPrefix || o.SystemContains != a.SystemContains || o.Model != a.Model ||
				o.Purpose != a.Purpose || !slices.Equal(o.Tools, a.Tools) || (o.Match == nil) != (a.Match == nil)
			return s, differs
		}
	}
	s := &script{agent: a}
	m.agents = append(m.agents, s)
	return s, false
}

// Exchange is one prompt an agent sent and what the fake answered.
type Exchange struct {
	Agent    string   `json:"agent"`
	Prompt   *Prompt  `json:"prompt"`
	Response Response `json:"response"`
	// ToolCalls are the tools the answer asked for, each with what the
	// agent's tool returned, from the agent's next prompts.
	ToolCalls []ToolCallResult `json:"toolCalls,omitempty"`
	// Done says the whole answer was written; a stream fills in as the
	// agent reads it.
	Done bool `json:"done"`
}

// ToolCallResult is a tool call and what came back for it.
type ToolCallResult struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Returned says the agent sent a result; Result is it, IsError that
	// the agent reported it as an error.
	Returned bool   `json:"returned"`
	Result   string `json:"result,omitempty"`
	IsError  bool   `json:"isError,omitempty"`
}

// Calls returns what the agent was asked and answered, in order.
func (m *Model) Calls(a Agent) []Exchange {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Exchange{}
	for _, c := range m.calls {
		if c.Agent == a.Name {
			cc := *c
			cc.ToolCalls = slices.Clone(c.ToolCalls)
			out = append(out, cc)
		}
	}
	return out
}

// AllCalls returns every agent's calls, in order.
func (m *Model) AllCalls() []Exchange {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Exchange{}
	for _, c := range m.calls {
		cc := *c
		cc.ToolCalls = slices.Clone(c.ToolCalls)
		out = append(out, cc)
	}
	return out
}

// AssertPrompted fails the test unless a prompt of the agent satisfies
// pred.
func (m *Model) AssertPrompted(a Agent, pred func(*Prompt) bool) {
	if m.t != nil {
		m.t.Helper()
	}
	calls := m.Calls(a)
	if !slices.ContainsFunc(calls, func(c Exchange) bool { return pred(c.Prompt) }) {
		m.errorf("fakeai: agent %q: none of its %d prompts is the one asserted", a.Name, len(calls))
	}
}

// AssertNotPrompted fails the test if a prompt of the agent satisfies
// pred.
func (m *Model) AssertNotPrompted(a Agent, pred func(*Prompt) bool) {
	if m.t != nil {
		m.t.Helper()
	}
	for i, c := range m.Calls(a) {
		if pred(c.Prompt) {
			m.errorf("fakeai: agent %q: prompt %d is one asserted never to come: %q", a.Name, i+1, opening(c.Prompt))
		}
	}
}

// AssertNeverPrompted fails the test if the agent was prompted at all.
func (m *Model) AssertNeverPrompted(a Agent) {
	if m.t != nil {
		m.t.Helper()
	}
	if calls := m.Calls(a); len(calls) > 0 {
		m.errorf("fakeai: agent %q was prompted %d times; want never (first: %q)", a.Name, len(calls), opening(calls[0].Prompt))
	}
}

// Failures returns what went wrong so far: unscripted prompts and
// embeddings and images, outputs that broke their schema, tool results
// that did not come.
func (m *Model) Failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.failed...)
}

// Problems returns the failures and the scripts no prompt used: what
// New's cleanup fails the test with.
func (m *Model) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(slices.Clone(m.failed), m.unusedLocked()...)
}

func (m *Model) unusedLocked() []string {
	var out []string
	for _, s := range m.agents {
		if len(s.queue) == 0 {
			continue
		}
		var left []string
		for _, e := range s.queue {
			left = append(left, e.r.String())
		}
		n := fmt.Sprintf("%d scripted answers", len(s.queue))
		if len(s.queue) == 1 {
			n = "1 scripted answer"
		}
		out = append(out, fmt.Sprintf("fakeai: agent %q: %s never asked for (%s): the agent stopped before asking for it, "+
			"or its prompts matched another agent's script; script only what the test makes it ask",
			s.agent.Name, n, strings.Join(left, ", ")))
	}
	return append(out, m.mediaProblemsLocked()...)
}

// DropUnused returns the scripted answers (and vectors and images) no
// request used, as Problems describes them, and forgets them: what the
// end of a test scope does, so that one test's script never answers the
// next test's prompt.
func (m *Model) DropUnused() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	unused := m.unusedLocked()
	for _, s := range m.agents {
		s.queue = nil
	}
	m.media.vectors, m.media.images = nil, nil
	return unused
}

// Reset forgets every script, call and failure: the model as it was made.
func (m *Model) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.agents, m.calls, m.failed, m.media = nil, nil, nil, media{}
}

// errorf fails an assertion: the test's, or, for a model made with
// NewModel, through its fail func.
func (m *Model) errorf(format string, args ...any) {
	if m.t != nil {
		m.t.Helper()
		m.t.Errorf(format, args...)
		return
	}
	m.report(fmt.Sprintf(format, args...))
}

func (m *Model) report(s string) {
	m.mu.Lock()
	m.failed = append(m.failed, s)
	m.mu.Unlock()
	if m.fail != nil {
		m.fail(s)
	}
}

// ServeHTTP answers a model request by its path, as the proxy's dialect
// detection reads it.
func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := wire.DialectOf(r.URL.Path)
	bad := func(status int, why string) {
		m.report(fmt.Sprintf("fakeai: %s %s: %s", r.Method, r.URL.Path, why))
		writeError(w, d, status, "fakeai: "+why, false)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		bad(http.StatusMethodNotAllowed, "model routes take POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		bad(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is unreadable or over %d MiB: %v", maxBody>>20, err))
		return
	}
	if why := malformed(r.URL.Path, d, body); why != "" {
		bad(http.StatusBadRequest, why)
		return
	}
	switch {
	case isEmbeddings(r.URL.Path):
		m.serveEmbeddings(w, r, body)
		return
	case isImages(r.URL.Path):
		m.serveImages(w, r, body)
		return
	}
	if d == "" {
		bad(http.StatusNotFound, "not a model route")
		return
	}
	p := wire.ParsePrompt(d, r.Header, body)
	if p.Images {
		m.chatImages(r.Context(), w, p)
		return
	}
	c, a := m.answer(p)
	done := func() {
		if c != nil {
			m.mu.Lock()
			c.Done = true
			m.mu.Unlock()
		}
	}
	if a.status != 0 {
		done()
		writeError(w, d, a.status, a.reason, a.retry)
		return
	}
	render(r.Context(), w, p, a, a.id, done)
}

// answer picks the script for p, records the call, and returns what to
// answer.
func (m *Model) answer(p *Prompt) (*Exchange, answer) {
	m.mu.Lock()
	m.returnedLocked(p)
	picked, i, named := m.pickLocked(p)
	if picked == nil {
		m.mu.Unlock()
		who := "no agent matches it"
		if named != nil {
			who = fmt.Sprintf("agent %q has no scripted answer left", named.agent.Name)
			if len(named.queue) > 0 {
				who = fmt.Sprintf("agent %q has answers only for prompts that carry the results of its tool calls", named.agent.Name)
			}
		}
		m.report(fmt.Sprintf("fakeai: unscripted prompt (%s, model %q, purpose %s): %s: %q",
			p.Dialect, p.Model, p.Purpose, who, opening(p)))
		status := http.StatusServiceUnavailable
		if p.Dialect == wire.AISDK {
			// The AI SDK retries every 5xx whatever the headers say; a
			// 400 is one failure, not three.
			status = http.StatusBadRequest
		}
		return nil, answer{status: status, reason: "fakeai: no scripted answer for this prompt: " + who}
	}
	e := picked.queue[i]
	picked.queue = slices.Delete(picked.queue, i, i+1)
	var missing []string
	for _, sc := range e.after {
		if !slices.ContainsFunc(p.Results, func(r ToolResult) bool { return r.CallID == sc.id }) {
			missing = append(missing, sc.name+" "+sc.id)
		}
	}
	m.ids++
	a := answer{id: m.ids, usage: e.r.usage}
	c := &Exchange{Agent: picked.agent.Name, Prompt: p, Response: e.r}
	switch e.r.kind {
	case kindText:
		a.text = e.r.text
	case kindTruncated:
		a.text, a.finish = e.r.text, finishLength
	case kindError:
		a.status, a.reason, a.retry = e.r.status, "fakeai: scripted provider error", true
	case kindOutput:
		text, err := outputText(e.r.output, p.Schema)
		if err != nil {
			a.status, a.reason = http.StatusInternalServerError, "fakeai: "+err.Error()
			defer m.report(fmt.Sprintf("fakeai: agent %q: %s: %v", picked.agent.Name, e.r, err))
		}
		a.text = text
	case kindToolCalls:
		a.finish = finishTools
		if bad := unoffered(p, e.r.calls); bad != "" {
			a.status, a.reason = http.StatusInternalServerError, "fakeai: "+bad
			defer m.report(fmt.Sprintf("fakeai: agent %q: %s: %s", picked.agent.Name, e.r, bad))
			break
		}
		for _, tc := range e.r.calls {
			m.ids++
			sc := sentCall{id: callID(p.Dialect, m.ids), itemID: fmt.Sprintf("fc_fake_%d", m.ids), name: tc.Name, input: tc.Input}
			a.calls = append(a.calls, sc)
			c.ToolCalls = append(c.ToolCalls, ToolCallResult{ID: sc.id, Name: tc.Name, Input: tc.Input})
		}
	}
	if e.r.then != nil && a.status == 0 {
		picked.queue = append([]entry{{r: *e.r.then, after: a.calls}}, picked.queue...)
	}
	m.calls = append(m.calls, c)
	m.mu.Unlock()
	if len(missing) > 0 {
		m.report(fmt.Sprintf("fakeai: agent %q: the prompt after the tool calls carries no result for %s", picked.agent.Name, strings.Join(missing, ", ")))
	}
	return c, a
}

// maxBody caps a request body, as providers cap theirs.
const maxBody = 32 << 20

// malformed says what a request lacks that its provider would refuse it
// for, or "".
func malformed(path string, d wire.Dialect, body []byte) string {
	if !gjson.ValidBytes(body) {
		return "the request body is not JSON"
	}
	j := gjson.ParseBytes(body)
	need := func(field string, ok func(gjson.Result) bool, what string) string {
		if v := j.Get(field); !v.Exists() || !ok(v) {
			return fmt.Sprintf("the request needs %q, %s", field, what)
		}
		return ""
	}
	array := func(v gjson.Result) bool { return v.IsArray() }
	number := func(v gjson.Result) bool { return v.Type == gjson.Number }
	str := func(v gjson.Result) bool { return v.Type == gjson.String }
	textOrArray := func(v gjson.Result) bool { return v.Type == gjson.String || v.IsArray() }
	switch {
	case isEmbeddings(path) && strings.HasSuffix(path, "/embedding-model"):
		return need("values", array, "an array of values")
	case isEmbeddings(path):
		return need("input", textOrArray, "a string or an array")
	case isImages(path):
		return need("prompt", str, "a string")
	}
	switch d {
	case wire.Anthropic:
		if why := need("messages", array, "an array"); why != "" {
			return why
		}
		if why := need("max_tokens", number, "a number"); why != "" {
			return why
		}
		return unansweredAnthropic(j)
	case wire.OpenAIChat:
		if why := need("messages", array, "an array"); why != "" {
			return why
		}
		return unansweredChat(j)
	case wire.OpenAIResponses:
		return need("input", textOrArray, "a string or an array of items")
	case wire.AISDK:
		return need("prompt", array, "an array")
	}
	return ""
}

// unansweredAnthropic says which tool_use blocks have no tool_result in
// the next message, as Anthropic refuses them, or "".
func unansweredAnthropic(j gjson.Result) string {
	msgs := j.Get("messages").Array()
	for i, m := range msgs {
		var missing []string
		for _, part := range m.Get("content").Array() {
			if part.Get("type").String() != "tool_use" {
				continue
			}
			id := part.Get("id").String()
			if i+1 >= len(msgs) || !msgs[i+1].Get(`content.#(tool_use_id==`+strconv.Quote(id)+`)`).Exists() {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("messages.%d: tool_use ids were found without tool_result blocks immediately after: %s", i, strings.Join(missing, ", "))
		}
	}
	return ""
}

// unansweredChat says which assistant tool_calls no tool message answers
// before the next assistant message, as OpenAI refuses them, or "".
func unansweredChat(j gjson.Result) string {
	msgs := j.Get("messages").Array()
	for i, m := range msgs {
		for _, c := range m.Get("tool_calls").Array() {
			id, answered := c.Get("id").String(), false
			for _, n := range msgs[i+1:] {
				if n.Get("role").String() != "tool" {
					break
				}
				answered = answered || n.Get("tool_call_id").String() == id
			}
			if !answered {
				return fmt.Sprintf("messages.%d: an assistant message with tool_calls must be followed by tool messages for each tool_call_id; %s has none", i, id)
			}
		}
	}
	return ""
}

// pickLocked chooses the queued answer for p: a follow-up whose tool
// calls p carries results for, so that each conversation gets its own;
// else the next answer that waits for no results, of the first agent
// that matches p and has one. named is the first agent that matches.
func (m *Model) pickLocked(p *Prompt) (picked *script, i int, named *script) {
	for _, s := range m.agents {
		if !s.agent.matches(p) {
			continue
		}
		if named == nil {
			named = s
		}
		for i, e := range s.queue {
			if slices.ContainsFunc(e.after, func(c sentCall) bool {
				return slices.ContainsFunc(p.Results, func(r ToolResult) bool { return r.CallID == c.id })
			}) {
				return s, i, named
			}
		}
	}
	for _, s := range m.agents {
		if !s.agent.matches(p) {
			continue
		}
		for i, e := range s.queue {
			if len(e.after) == 0 {
				return s, i, named
			}
		}
	}
	return nil, -1, named
}

// unoffered says which scripted tool calls the request does not offer:
// the real model could not have asked for them.
func unoffered(p *Prompt, calls []ToolCall) string {
	var offered, bad []string
	for _, t := range p.Tools {
		offered = append(offered, t.Name)
	}
	for _, c := range calls {
		if !slices.Contains(offered, c.Name) {
			bad = append(bad, c.Name)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	if len(offered) == 0 {
		return fmt.Sprintf("the request offers no tools, so the model cannot call %s", strings.Join(bad, ", "))
	}
	return fmt.Sprintf("the request does not offer %s (it offers %s)", strings.Join(bad, ", "), strings.Join(offered, ", "))
}

// returnedLocked fills in the results p carries into the calls that asked
// for them.
func (m *Model) returnedLocked(p *Prompt) {
	for _, r := range p.Results {
		for _, c := range m.calls {
			for i := range c.ToolCalls {
				if tc := &c.ToolCalls[i]; tc.ID == r.CallID && !tc.Returned {
					tc.Returned, tc.Result, tc.IsError = true, r.Content, r.IsError
				}
			}
		}
	}
}

func callID(d wire.Dialect, n int) string {
	if d == wire.Anthropic {
		return fmt.Sprintf("toolu_fake_%02d", n)
	}
	return fmt.Sprintf("call_fake_%d", n)
}
