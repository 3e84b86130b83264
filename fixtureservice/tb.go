package fixtureservice

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/agentvcr/agentvcr/fixture"
)

// fixtureT is the fixture.TB of one served fixture: what a *testing.T is
// to a Go test. Fatalf ends the goroutine of the request that called it,
// as testing's does; the failures are kept and handed to the client with
// the next answer; cleanups run, last first, when the client deletes the
// fixture or the service closes.
type fixtureT struct {
	name string
	dir  string // where TempDir makes directories; removed at the end

	mu       sync.Mutex
	failures []string
	told     int // failures handed to the client so far
	timeout  bool
	logs     []string
	cleanups []func()
	temps    int
}

var _ fixture.TB = (*fixtureT)(nil)

func newFixtureT(name string) (*fixtureT, error) {
	dir, err := os.MkdirTemp("", "agentvcr-fixture-")
	if err != nil {
		return nil, err
	}
	return &fixtureT{name: name, dir: dir}, nil
}

func (t *fixtureT) Helper()      {}
func (t *fixtureT) Name() string { return t.name }

func (t *fixtureT) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *fixtureT) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, fmt.Sprintf(format, args...))
	for _, a := range args {
		if err, ok := a.(error); ok {
			if _, ok := errors.AsType[*fixture.TimeoutError](err); ok {
				t.timeout = true
			}
		}
	}
}

func (t *fixtureT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

// Logf keeps what the fixture logs (an app's output when the fixture
// failed) for the deletion's answer.
func (t *fixtureT) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, fmt.Sprintf(format, args...))
}

func (t *fixtureT) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures) > 0
}

func (t *fixtureT) TempDir() string {
	t.mu.Lock()
	t.temps++
	dir := filepath.Join(t.dir, fmt.Sprintf("%03d", t.temps))
	t.mu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("fixture service: a temporary directory: %v", err)
	}
	return dir
}

// outcome is what a request's body did: whether it returned, and the
// failures no answer has handed the client yet.
type outcome struct {
	returned bool
	failures []string
	timeout  bool
}

// do runs f in a goroutine of its own, as a test's body runs, and
// returns when f returns or calls Fatalf. A panic fails the fixture
// instead of the service.
func (t *fixtureT) do(f func()) outcome {
	done := make(chan bool, 1)
	go func() {
		returned := false
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
			done <- returned
		}()
		f()
		returned = true
	}()
	returned := <-done
	t.mu.Lock()
	defer t.mu.Unlock()
	o := outcome{returned: returned, failures: slices.Clone(t.failures[t.told:]), timeout: t.timeout}
	t.told = len(t.failures)
	t.timeout = false
	return o
}

// cleanup runs the cleanups, last first, and removes the temporary
// directories; it returns the failures not yet handed to the client, and
// what the fixture logged.
func (t *fixtureT) cleanup() (failures, logs []string) {
	for {
		t.mu.Lock()
		if len(t.cleanups) == 0 {
			t.mu.Unlock()
			break
		}
		f := t.cleanups[len(t.cleanups)-1]
		t.cleanups = t.cleanups[:len(t.cleanups)-1]
		t.mu.Unlock()
		failures = append(failures, t.do(f).failures...)
	}
	if err := os.RemoveAll(t.dir); err != nil {
		failures = append(failures, fmt.Sprintf("fixture service: remove the fixture's temporary files: %v", err))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	failures = append(failures, t.failures[t.told:]...)
	t.told = len(t.failures)
	return failures, slices.Clone(t.logs)
}
