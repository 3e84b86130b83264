// Package tbrun runs fixture code outside go test as a test runs it: T is
// a fixture.TB whose Fatalf ends the goroutine Do runs the code in, whose
// failures, errors and logs are kept for the host to report, and whose
// cleanups run, last first, when the host says. The eval runner runs each
// attempt on one; the fixture service each fixture.
package tbrun

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
)

// T is one test-like run: what a *testing.T is to a test.
type T struct {
	name string
	dir  string // where TempDir makes directories

	mu       sync.Mutex
	failures []string
	errs     []error // the errors among the failures' arguments
	logs     []string
	cleanups []func()
	temps    int
}

// New returns a T named name whose temporary directories are made under
// dir; the host removes dir.
func New(name, dir string) *T { return &T{name: name, dir: dir} }

func (t *T) Helper()      {}
func (t *T) Name() string { return t.name }

func (t *T) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *T) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failures = append(t.failures, fmt.Sprintf(format, args...))
	for _, a := range args {
		if err, ok := a.(error); ok {
			t.errs = append(t.errs, err)
		}
	}
}

// Fatalf fails and ends the calling goroutine, as testing's does: the
// code Do runs stops there.
func (t *T) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *T) Logf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.logs = append(t.logs, fmt.Sprintf(format, args...))
}

func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.failures) > 0
}

// TempDir makes a new directory under the T's.
func (t *T) TempDir() string {
	t.mu.Lock()
	t.temps++
	dir := filepath.Join(t.dir, fmt.Sprintf("%03d", t.temps))
	t.mu.Unlock()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("a temporary directory: %v", err)
	}
	return dir
}

// Do runs f in a goroutine of its own, as a test's body runs, and says
// whether f returned: false when it called Fatalf or panicked. A panic
// fails the T instead of the host.
func (t *T) Do(f func()) (returned bool) {
	done := make(chan bool, 1)
	go func() {
		ok := false
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("panic: %v\n%s", r, debug.Stack())
			}
			done <- ok
		}()
		f()
		ok = true
	}()
	return <-done
}

// RunCleanups runs the cleanups, last first, each as Do runs code, so
// that one that fails cannot stop the others; a cleanup may add more.
func (t *T) RunCleanups() {
	for {
		t.mu.Lock()
		if len(t.cleanups) == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[len(t.cleanups)-1]
		t.cleanups = t.cleanups[:len(t.cleanups)-1]
		t.mu.Unlock()
		t.Do(f)
	}
}

// Failures are the failures so far, in order.
func (t *T) Failures() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.failures)
}

// Errors are the errors the failures so far were given, in order.
func (t *T) Errors() []error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.errs)
}

// Logs are what was logged so far.
func (t *T) Logs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.logs)
}
