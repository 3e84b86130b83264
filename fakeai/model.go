package fakeai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

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
func (m *Model) Respond(a Agent, responses ...Response) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.scriptLocked(a)
	for _, r := range responses {
		s.queue = append(s.queue, entry{r: r})
	}
}

func (m *Model) scriptLocked(a Agent) *script {
	for _, s := range m.agents {
		if s.agent.Name == a.Name {
			return s
		}
	}
	s := &script{agent: a}
	m.agents = append(m.agents, s)
	return s
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
	var out []Exchange
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
	out := make([]Exchange, 0, len(m.calls))
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
			m.errorf("fakeai: agent %q: prompt %d is one asserted never to come: %q", a.Name, i+1, c.Prompt.start())
		}
	}
}

// AssertNeverPrompted fails the test if the agent was prompted at all.
func (m *Model) AssertNeverPrompted(a Agent) {
	if m.t != nil {
		m.t.Helper()
	}
	if calls := m.Calls(a); len(calls) > 0 {
		m.errorf("fakeai: agent %q was prompted %d times; want never (first: %q)", a.Name, len(calls), calls[0].Prompt.start())
	}
}

// Failures returns what went wrong so far: unscripted prompts and
// embeddings and images, outputs that broke their schema, tool results
// that did not come.
func (m *Model) Failures() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.failed)
}

// Problems returns the failures and the scripts no prompt used: what
// New's cleanup fails the test with.
func (m *Model) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(m.failed)
	for _, s := range m.agents {
		if len(s.queue) == 0 {
			continue
		}
		var left []string
		for _, e := range s.queue {
			left = append(left, e.r.String())
		}
		out = append(out, fmt.Sprintf("fakeai: agent %q: %d scripted answers never asked for (%s): the loop stopped before reaching the scripted answer",
			s.agent.Name, len(s.queue), strings.Join(left, ", ")))
	}
	return append(out, m.mediaProblemsLocked()...)
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
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "fakeai: reading the request: "+err.Error(), http.StatusBadRequest)
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
	d := wire.DialectOf(r.URL.Path)
	if d == "" {
		m.report(fmt.Sprintf("fakeai: %s %s is not a model route", r.Method, r.URL.Path))
		http.Error(w, "fakeai: not a model route: "+r.URL.Path, http.StatusNotFound)
		return
	}
	p := parsePrompt(d, r.Header, body)
	if p.images {
		m.chatImages(w, p)
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
	render(w, p, a, a.id, done)
}

// answer picks the script for p, records the call, and returns what to
// answer.
func (m *Model) answer(p *Prompt) (*Exchange, answer) {
	m.mu.Lock()
	m.returnedLocked(p)
	var named, picked *script
	for _, s := range m.agents {
		if !s.agent.matches(p) {
			continue
		}
		if named == nil {
			named = s
		}
		if len(s.queue) > 0 {
			picked = s
			break
		}
	}
	if picked == nil {
		m.mu.Unlock()
		who := "no agent matches it"
		if named != nil {
			who = fmt.Sprintf("agent %q has no scripted answer left", named.agent.Name)
		}
		m.report(fmt.Sprintf("fakeai: unscripted prompt (%s, model %q, purpose %s): %s: %q",
			p.Dialect, p.Model, p.Purpose, who, p.start()))
		return nil, answer{status: http.StatusServiceUnavailable, reason: "fakeai: no scripted answer for this prompt: " + who}
	}
	e := picked.queue[0]
	picked.queue = picked.queue[1:]
	var missing []string
	for _, sc := range e.after {
		if !slices.ContainsFunc(p.Results, func(r ToolResult) bool { return r.CallID == sc.id }) {
			missing = append(missing, sc.name+" "+sc.id)
		}
	}
	m.ids++
	a := answer{id: m.ids}
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
		for _, tc := range e.r.calls {
			m.ids++
			sc := sentCall{id: callID(p.Dialect, m.ids), itemID: fmt.Sprintf("fc_fake_%d", m.ids), name: tc.Name, input: tc.Input}
			a.calls = append(a.calls, sc)
			c.ToolCalls = append(c.ToolCalls, ToolCallResult{ID: sc.id, Name: tc.Name, Input: tc.Input})
		}
	}
	if e.r.then != nil {
		next := entry{r: *e.r.then, after: a.calls}
		next.r.then = e.r.then.then
		picked.queue = append([]entry{next}, picked.queue...)
	}
	m.calls = append(m.calls, c)
	m.mu.Unlock()
	if len(missing) > 0 {
		m.report(fmt.Sprintf("fakeai: agent %q: the prompt after the tool calls carries no result for %s", picked.agent.Name, strings.Join(missing, ", ")))
	}
	return c, a
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
