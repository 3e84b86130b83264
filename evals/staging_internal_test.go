package evals

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/filelock"
)

// A run removes what a dead run into the same directory left (its
// staging directory, with or without its lock file, and a lone lock
// file) and leaves a live run's alone; its own lock file goes when it
// lets go.
func TestANewRunSweepsWhatDeadRunsLeft(t *testing.T) {
	parent := t.TempDir()
	mk := func(name string) {
		if err := os.MkdirAll(filepath.Join(parent, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parent, name, "rows.jsonl"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Killed before it had a lock file (a run of an older version).
	mk(".baseline.running-dead")
	// Killed: its lock file stays, and no process holds it.
	mk(".baseline.running-killed")
	os.WriteFile(filepath.Join(parent, ".baseline.running-killed.lock"), nil, 0o600)
	// Killed before its directory was made.
	os.WriteFile(filepath.Join(parent, ".baseline.running-lone.lock"), nil, 0o600)
	// A run still going.
	mk(".baseline.running-live")
	unlock, err := filelock.Lock(filepath.Join(parent, ".baseline.running-live.lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	mk(".other.running-dead") // another variant's: not this run's to judge
	mk("baseline")            // the last whole run

	staging, release, err := newStaging(filepath.Join(parent, "baseline"))
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		es, _ := os.ReadDir(parent)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	mine := filepath.Base(staging)
	want := []string{".baseline.running-live", ".baseline.running-live.lock", mine, mine + ".lock", ".other.running-dead", "baseline"}
	slices.Sort(want)
	if got := names(); !slices.Equal(got, want) {
		t.Fatalf("after the sweep: %q, want %q", got, want)
	}
	// Held: another run's sweep leaves this one's staging alone.
	sweep(parent, "baseline")
	if _, err := os.Stat(staging); err != nil {
		t.Fatalf("a sweep removed a live run's staging: %v", err)
	}
	os.RemoveAll(staging) // as a run that put its results in place
	release()
	if _, err := os.Stat(staging + ".lock"); !os.IsNotExist(err) {
		t.Fatalf("the lock file stayed: %v", err)
	}
}
