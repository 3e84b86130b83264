package proxy

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// A test scope ("session" in Roach) holds the recordings made while it is
// open in memory, and writes them only if the test passes: a failed test
// must not leave recordings of its wrong turns behind. A request belongs
// to the scope open when it started, whatever happens after.
type scope struct {
	name     string
	missed   int // misses at its start, to count its own
	unknown  int // unknown Slack methods at its start
	fakes    int // failures of the scripted model at its start
	recorded []scoped
	ended    bool
	// open counts the responses of the scope being recorded: the agent
	// may have all of a response before the proxy has read its end, and a
	// test ends its scope as soon as the agent answers. EndScope waits
	// for them.
	mu      sync.Mutex
	settled *sync.Cond
	open    int
}

// start counts a response of the scope that is being recorded; the
// returned func says it is done, once.
func (sc *scope) start() func() {
	sc.mu.Lock()
	sc.open++
	sc.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			sc.mu.Lock()
			sc.open--
			sc.settled.Broadcast()
			sc.mu.Unlock()
		})
	}
}

// settle waits until the scope's responses are recorded, or up to d.
func (sc *scope) settle(d time.Duration) {
	timer := time.AfterFunc(d, func() {
		sc.mu.Lock()
		sc.settled.Broadcast()
		sc.mu.Unlock()
	})
	defer timer.Stop()
	deadline := time.Now().Add(d)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for sc.open > 0 && time.Now().Before(deadline) {
		sc.settled.Wait()
	}
}

type scoped struct {
	st *ruleState
	in *cassette.Interaction
}

// ScopeResult says what a scope did.
type ScopeResult struct {
	Missed   int `json:"missed"`
	Recorded int `json:"recorded"`
	// Dropped counts the recordings a failed scope threw away.
	Dropped int `json:"dropped,omitempty"`
	// UnknownSlack are the Slack methods the agent called that the mock
	// does not know; a scope with any counts as failed.
	UnknownSlack []string `json:"unknownSlack,omitempty"`
	// Unscripted are the scripted model's failures in the scope: prompts
	// (and embeddings and images) no script answered; a scope with any
	// counts as failed.
	Unscripted []string `json:"unscripted,omitempty"`
	// Unused are the scripted answers (and vectors and images) the scope
	// left unasked for: the agent stopped before the script did. They are
	// dropped, so they never answer the next scope; a scope with any
	// counts as failed.
	Unused []string `json:"unused,omitempty"`
}

// Errors of the scope calls, for the control API to answer with.
var (
	ErrScopeOpen    = errors.New("a test scope is open already")
	ErrScopeNotOpen = errors.New("no test scope of that name is open")
	// ErrUnknownSlackMethod fails a scope in which the agent called a
	// Slack method the mock does not know: the mock answered
	// unknown_method, so the test did not see what Slack would do.
	ErrUnknownSlackMethod = errors.New("the agent called Slack methods the mock does not know")
	// ErrUnscripted fails a scope in which the scripted model got a
	// prompt no script answered: the agent saw a provider error the test
	// did not mean.
	ErrUnscripted = errors.New("the scripted model got what no script answers")
	// ErrUnusedScript fails a scope that ended with scripted answers no
	// request asked for: the agent did less than the test scripted.
	ErrUnusedScript = errors.New("the scripted model kept answers no request asked for")
)

// settleTimeout bounds how long EndScope waits for the scope's responses
// to be recorded.
const settleTimeout = 30 * time.Second

func (p *Proxy) currentScope() *scope {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.scope
}

// BeginScope opens a test scope. One is open at a time.
func (p *Proxy) BeginScope(name string) error {
	if name == "" {
		return errors.New("a test scope needs a name")
	}
	if err := p.init(); err != nil {
		return err
	}
	unknown, fakes := len(p.mockUnknown()), len(p.fakeFailures())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scope != nil {
		return fmt.Errorf("%w: %q", ErrScopeOpen, p.scope.name)
	}
	p.scope = &scope{name: name, missed: p.stats.Missed, unknown: unknown, fakes: fakes}
	p.scope.settled = sync.NewCond(&p.scope.mu)
	return nil
}

// EndScope closes the open scope. If the test passed, the scope's
// recordings are written to their cassettes; if not, they are dropped, as
// if never made. A scope in which the agent called a Slack method the mock
// does not know counts as failed, and EndScope returns
// ErrUnknownSlackMethod; one in which the scripted model got a prompt no
// script answers, ErrUnscripted; one that left scripted answers unasked
// for, ErrUnusedScript (and they are dropped, so that they never answer
// the next scope).
func (p *Proxy) EndScope(name string, passed bool) (ScopeResult, error) {
	if err := p.init(); err != nil {
		return ScopeResult{}, err
	}
	if sc := p.currentScope(); sc != nil && sc.name == name {
		sc.settle(settleTimeout)
	}
	unknown, fakes := p.mockUnknown(), p.fakeFailures()
	var unused []string
	if sc := p.currentScope(); sc != nil && sc.name == name && p.c.fake != nil {
		unused = p.c.fake.DropUnused()
	}
	p.mu.Lock()
	res, touched, failed, err := p.endScopeLocked(name, passed, unknown, fakes, unused)
	p.mu.Unlock()
	if err != nil || touched == nil {
		return res, err
	}
	// Written before EndScope returns: the test's recordings are on disk
	// when it ends.
	for st := range touched {
		p.writer.mark(st)
	}
	if err := p.Flush(); err != nil {
		return res, err
	}
	return res, failed
}

// endScopeLocked closes the scope; the caller holds p.mu. It returns the
// rules whose cassettes must be written, when the scope passed.
func (p *Proxy) endScopeLocked(name string, passed bool, unknown, fakes, unused []string) (ScopeResult, map[*ruleState]bool, error, error) {
	sc := p.scope
	if sc == nil || sc.name != name {
		return ScopeResult{}, nil, nil, fmt.Errorf("%w: %q", ErrScopeNotOpen, name)
	}
	p.scope = nil
	sc.ended = true
	res := ScopeResult{Missed: p.stats.Missed - sc.missed, Recorded: len(sc.recorded)}
	var failed error
	if len(unknown) > sc.unknown {
		res.UnknownSlack = unknown[sc.unknown:]
		failed = fmt.Errorf("%w: %v; the scope counts as failed and its recordings were dropped (the mock answers the methods docs/proxy.md#the-slack-mock lists; for others, give the slack rule another mode with --config, such as auto to record the real Slack)", ErrUnknownSlackMethod, res.UnknownSlack)
		passed = false
	}
	if len(fakes) > sc.fakes {
		res.Unscripted = fakes[sc.fakes:]
		failed = errors.Join(failed, fmt.Errorf("%w: %s; the scope counts as failed (script it with POST /v1/fakeai/respond)", ErrUnscripted, strings.Join(res.Unscripted, "; ")))
		passed = false
	}
	if len(unused) > 0 {
		res.Unused = unused
		failed = errors.Join(failed, fmt.Errorf("%w: %s; the scope counts as failed and the answers were dropped", ErrUnusedScript, strings.Join(unused, "; ")))
		passed = false
	}
	touched := map[*ruleState]bool{}
	for _, r := range sc.recorded {
		touched[r.st] = true
	}
	if passed {
		for _, r := range sc.recorded {
			r.st.unwritten = append(r.st.unwritten, r.in)
		}
		return res, touched, nil, nil
	}
	drop := map[*cassette.Interaction]bool{}
	for _, r := range sc.recorded {
		drop[r.in] = true
		delete(r.st.recorded, r.in)
	}
	for st := range touched {
		kept := st.cassette.Interactions[:0]
		for _, in := range st.cassette.Interactions {
			if !drop[in] {
				kept = append(kept, in)
			}
		}
		st.cassette.Interactions = kept
		st.index = cassette.NewIndex()
		for _, in := range kept {
			st.index.Add(st.matcher, in)
		}
	}
	p.stats.Recorded -= len(sc.recorded)
	res.Recorded, res.Dropped = 0, len(sc.recorded)
	return res, nil, failed, failed
}

// mockUnknown is what the Slack mock did not know, none without a mock.
func (p *Proxy) mockUnknown() []string {
	if p.c.slack == nil {
		return nil
	}
	return p.c.slack.Unknown()
}

// fakeFailures is what the scripted model could not answer, none without
// one.
func (p *Proxy) fakeFailures() []string {
	if p.c.fake == nil {
		return nil
	}
	return p.c.fake.Failures()
}

// OpenScope returns the name of the open test scope, or "".
func (p *Proxy) OpenScope() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scope == nil {
		return ""
	}
	return p.scope.name
}
