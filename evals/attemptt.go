package evals

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/fixture"
)

// attemptT is the fixture.TB of one attempt: what a *testing.T is to a
// test. Fatalf ends the attempt's goroutine, as testing's does, and the
// failures are kept for the attempt's row; cleanups run last first, each
// in its own goroutine so that one that fails cannot stop the others.
type attemptT struct {
	name string
	dir  string // where TempDir makes directories

	mu       sync.Mutex
	failures []string
	errs     []error // the errors among the failures' arguments
	logs     []string
	cleanups []func()
	temps    int
}

var _ fixture.TB = (*attemptT)(nil)

func (t *attemptT) Helper()      {}
func (t *attemptT) Name() string { return t.name }

func (t *attemptT) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *attemptT) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, fmt.Sprintf(format, args...))
	for _, a := range args {
		if err, ok := a.(error); ok {
			t.errs = append(t.errs, err)
		}
	}
}

func (t *attemptT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *attemptT) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, fmt.Sprintf(format, args...))
}

func (t *attemptT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures) > 0
}

// TempDir makes a new directory under the attempt's; the attempt's is
// removed when the run ends.
func (t *attemptT) TempDir() string {
	t.mu.Lock()
	t.temps++
	n := t.temps
	t.mu.Unlock()
	dir := fmt.Sprintf("%s/%03d", t.dir, n)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("evals: a temporary directory: %v", err)
	}
	return dir
}

// do runs f as the attempt's body, in a goroutine of its own, and returns
// when f returns or calls Fatalf. A panic in f (an eval's Setup or Grade)
// fails the attempt, as it fails a test, instead of the whole run.
func (t *attemptT) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		f()
	}()
	<-done
}

// cleanup runs the cleanups, last first.
func (t *attemptT) cleanup() {
	for {
		t.mu.Lock()
		if len(t.cleanups) == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[len(t.cleanups)-1]
		t.cleanups = t.cleanups[:len(t.cleanups)-1]
		t.mu.Unlock()
		t.do(f)
	}
}

// failure is what failed, in one line, or "".
func (t *attemptT) failure() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.failures, "; ")
}

// logged is what the fixture logged.
func (t *attemptT) logged() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.logs)
}

// timedOut says whether a failure was a fixture call's timeout.
func (t *attemptT) timedOut() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, err := range t.errs {
		if _, ok := errors.AsType[*fixture.TimeoutError](err); ok {
			return true
		}
	}
	return false
}
