package fixtureservice

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/tbrun"
)

// fixtureT is the fixture.TB of one served fixture: what a *testing.T is
// to a Go test. Fatalf ends the goroutine of the request that called it,
// as testing's does; the failures are kept and handed to the client with
// the next answer; cleanups run, last first, when the client deletes the
// fixture or the service closes.
type fixtureT struct {
	*tbrun.T
	dir string // the fixture's temporary directories, removed at the end

	mu   sync.Mutex
	told int // failures (and errors) handed to the client so far
	errs int
}

var _ fixture.TB = (*fixtureT)(nil)

func newFixtureT(name string) (*fixtureT, error) {
	dir, err := os.MkdirTemp("", "agentvcr-fixture-")
	if err != nil {
		return nil, err
	}
	return &fixtureT{T: tbrun.New(name, dir), dir: dir}, nil
}

// outcome is what a request's body did: whether it returned, and the
// failures no answer has handed the client yet.
type outcome struct {
	returned bool
	failures []string
	timeout  bool // one of them was a call's timeout
}

// do runs f as a test's body runs, and returns when f returns or calls
// Fatalf, with the failures not yet told.
func (t *fixtureT) do(f func()) outcome {
	returned := t.Do(f)
	failures, timeout := t.untold()
	return outcome{returned: returned, failures: failures, timeout: timeout}
}

// untold returns the failures not yet handed to the client, and whether
// one was a timeout, and counts them told.
func (t *fixtureT) untold() ([]string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all, errs := t.Failures(), t.Errors()
	failures := all[t.told:]
	timeout := false
	for _, err := range errs[t.errs:] {
		if _, ok := errors.AsType[*fixture.TimeoutError](err); ok {
			timeout = true
		}
	}
	t.told, t.errs = len(all), len(errs)
	return failures, timeout
}

// cleanup runs the cleanups, last first, and removes the temporary
// directories; it returns the failures not yet handed to the client, and
// what the fixture logged.
func (t *fixtureT) cleanup() (failures, logs []string) {
	t.RunCleanups()
	failures, _ = t.untold()
	if err := os.RemoveAll(t.dir); err != nil {
		failures = append(failures, fmt.Sprintf("fixture service: remove the fixture's temporary files: %v", err))
	}
	return failures, t.Logs()
}
