package evals

import (
	"errors"
	"strings"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/tbrun"
)

// attemptT is the fixture.TB of one attempt: what a *testing.T is to a
// test. Fatalf ends the attempt's goroutine, as testing's does, and the
// failures are kept for the attempt's row; cleanups run last first, each
// in its own goroutine so that one that fails cannot stop the others.
type attemptT struct{ *tbrun.T }

var _ fixture.TB = attemptT{}

func newAttemptT(name, dir string) attemptT { return attemptT{tbrun.New(name, dir)} }

// do runs f as the attempt's body, in a goroutine of its own, and returns
// when f returns or calls Fatalf. A panic in f (an eval's Setup or Grade)
// fails the attempt, as it fails a test, instead of the whole run.
func (t attemptT) do(f func()) { t.Do(f) }

// cleanup runs the cleanups, last first.
func (t attemptT) cleanup() { t.RunCleanups() }

// failure is what failed, in one line, or "".
func (t attemptT) failure() string { return strings.Join(t.Failures(), "; ") }

// logged is what the fixture logged.
func (t attemptT) logged() []string { return t.Logs() }

// timedOut says whether a failure was a fixture call's timeout.
func (t attemptT) timedOut() bool {
	for _, err := range t.Errors() {
		if _, ok := errors.AsType[*fixture.TimeoutError](err); ok {
			return true
		}
	}
	return false
}
