package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/pgtest"
)

// interruptWhileBlocked runs recorder with args while another transaction
// holds table locked, cancels it (as Ctrl-C does) once it waits on the
// lock, and returns what it did.
func interruptWhileBlocked(t *testing.T, dbURL, table string, args ...string) result {
	t.Helper()
	locker := pgtest.Connect(t, dbURL)
	ctx := context.Background()
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		var out, errb strings.Builder
		code := run(runCtx, args, strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		// pg_locks, unlike pg_stat_activity, is not a snapshot per transaction.
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("recorder ended before it waited on the lock: %+v", r)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("recorder never waited on the lock")
		}
		time.Sleep(10 * time.Millisecond) // polling pg_locks, bounded by the deadline
	}
	cancel()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("recorder did not stop when interrupted")
		return result{}
	}
}

func TestInterruptedExportSaysWhatItLeftUndone(t *testing.T) {
	dbURL, conn := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	web, _ := juniortest.WebLaunch()
	juniortest.Insert(t, conn, slack)
	juniortest.Insert(t, conn, web)
	dir := t.TempDir()

	file := filepath.Join(dir, "one.json")
	r := interruptWhileBlocked(t, dbURL, "junior_conversations", "export", "--database-url", dbURL, "--conversation", slack.ID, "-o", file)
	if r.code != 130 || r.stderr != "recorder: interrupted; nothing written\n" {
		t.Fatalf("interrupted export: %+v; want exit 130 and one line", r)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("an interrupted export left %v", entries)
	}

	out := filepath.Join(dir, "bulk")
	r = interruptWhileBlocked(t, dbURL, "junior_conversation_events", "export", "--database-url", dbURL, "--all", "--out-dir", out)
	if want := "recorder: interrupted; 0 of 2 conversations written to " + out + ", the one in progress not\n"; r.code != 130 || r.stderr != want {
		t.Fatalf("interrupted bulk export: %+v; want exit 130 and %q", r, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("an interrupted bulk export left %v", entries)
	}
}

func TestInterruptedLoadSaysWhatItLeftUndone(t *testing.T) {
	dbURL, _ := juniortest.Database(t)
	file := filepath.Join("..", "..", "recordings", "samples", "slack-thread.json")
	r := interruptWhileBlocked(t, dbURL, "junior_conversations", "load", "--database-url", dbURL, file)
	if want := "recorder: interrupted; 0 of 1 files loaded, " + file + " rolled back\n"; r.code != 130 || r.stderr != want {
		t.Fatalf("interrupted load: %+v; want exit 130 and %q", r, want)
	}
}
