package tbrun_test

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/tbrun"
)

var _ fixture.TB = (*tbrun.T)(nil)

// Fatalf ends the code Do runs there, as testing's does; a panic fails
// the T and not the host; cleanups run last first, even after one fails.
func TestDoStopsAtFatalAndCleanupsRunLastFirst(t *testing.T) {
	tt := tbrun.New("x", t.TempDir())
	after := false
	if tt.Do(func() { tt.Fatalf("stop: %v", errors.New("why")); after = true }) || after {
		t.Fatal("Do went on after Fatalf")
	}
	if tt.Do(func() { panic("boom") }) {
		t.Fatal("Do returned true after a panic")
	}
	var order []int
	tt.Cleanup(func() { order = append(order, 1) })
	tt.Cleanup(func() { tt.Fatalf("a failing cleanup") })
	tt.Cleanup(func() { order = append(order, 3) })
	tt.RunCleanups()
	if !slices.Equal(order, []int{3, 1}) {
		t.Fatalf("cleanups ran %v", order)
	}
	f := tt.Failures()
	if len(f) != 3 || f[0] != "stop: why" || len(tt.Errors()) != 1 || !tt.Failed() {
		t.Fatalf("failures %q, errors %v", f, tt.Errors())
	}
	if d := tt.TempDir(); d == "" {
		t.Fatal("no temp dir")
	} else if _, err := os.Stat(d); err != nil {
		t.Fatal(err)
	}
}
