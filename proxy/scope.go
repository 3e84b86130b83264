package proxy

import (
	"errors"
	"fmt"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// A test scope ("session" in Roach) holds the recordings made while it is
// open in memory, and writes them only if the test passes: a failed test
// must not leave recordings of its wrong turns behind. A request belongs
// to the scope open when it started, whatever happens after.
type scope struct {
	name     string
	missed   int // misses at its start, to count its own
	recorded []scoped
	ended    bool
}

type scoped struct {
	st *ruleState
	in *cassette.Interaction
}

// ScopeResult says what a scope did.
type ScopeResult struct {
	Missed   int `json:"missed"`
	Recorded int `json:"recorded"`
}

// Errors of the scope calls, for the control API to answer with.
var (
	ErrScopeOpen    = errors.New("a test scope is open already")
	ErrScopeNotOpen = errors.New("no test scope of that name is open")
)

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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scope != nil {
		return fmt.Errorf("%w: %q", ErrScopeOpen, p.scope.name)
	}
	p.scope = &scope{name: name, missed: p.stats.Missed}
	return nil
}

// EndScope closes the open scope. If the test passed, the scope's
// recordings are written to their cassettes; if not, they are dropped, as
// if never made.
func (p *Proxy) EndScope(name string, passed bool) (ScopeResult, error) {
	if err := p.init(); err != nil {
		return ScopeResult{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sc := p.scope
	if sc == nil || sc.name != name {
		return ScopeResult{}, fmt.Errorf("%w: %q", ErrScopeNotOpen, name)
	}
	p.scope = nil
	sc.ended = true
	res := ScopeResult{Missed: p.stats.Missed - sc.missed, Recorded: len(sc.recorded)}
	touched := map[*ruleState]bool{}
	for _, r := range sc.recorded {
		touched[r.st] = true
	}
	if passed {
		var errs []error
		for st := range touched {
			if err := p.save(st); err != nil {
				errs = append(errs, err)
			}
		}
		return res, errors.Join(errs...)
	}
	drop := map[*cassette.Interaction]bool{}
	for _, r := range sc.recorded {
		drop[r.in] = true
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
	res.Recorded = 0
	return res, nil
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
