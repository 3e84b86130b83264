package evals

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/filelock"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
	"github.com/agentvcr/agentvcr/internal/pgtest"
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

	staging, release, err := newStaging(filepath.Join(parent, "baseline"), nil)
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
	sweep(parent, "baseline", nil)
	if _, err := os.Stat(staging); err != nil {
		t.Fatalf("a sweep removed a live run's staging: %v", err)
	}
	os.RemoveAll(staging) // as a run that put its results in place
	release()
	if _, err := os.Stat(staging + ".lock"); !os.IsNotExist(err) {
		t.Fatalf("the lock file stayed: %v", err)
	}
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// A run killed before its attempts dropped their databases listed them
// beside its staging directory: the next run drops them, and only
// names the fixture gives its databases.
func TestTheSweepDropsTheDatabasesADeadRunMade(t *testing.T) {
	server, err := pgtest.Server()
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgcluster.CreateDatabase(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pgcluster.DropDatabase(context.Background(), server, left) })
	parent := t.TempDir()
	staging, release, err := newStaging(filepath.Join(parent, "baseline"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := noteDatabase(staging, left); err != nil {
		t.Fatal(err)
	}
	if err := noteDatabase(staging, "postgres"); err != nil { // not a fixture's: never dropped
		t.Fatal(err)
	}
	listed, err := os.ReadFile(staging + ".lock")
	if err != nil || string(listed) != left+"\npostgres\n" {
		t.Fatalf("the lock file lists %q: %v", listed, err)
	}
	// Killed: its lock is let go with the process, its files stay.
	release()
	os.WriteFile(staging+".lock", listed, 0o600)
	var dropped []string
	_, release, err = newStaging(filepath.Join(parent, "baseline"), func(name string) {
		dropped = append(dropped, name)
		if err := pgcluster.DropDatabase(t.Context(), server, name); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !slices.Equal(dropped, []string{left}) {
		t.Fatalf("dropped %q, want %q", dropped, left)
	}
	conn := pgtest.Connect(t, server)
	var n int
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", left).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the database is still there: %d %v", n, err)
	}
}
