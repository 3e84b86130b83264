package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// Appends from many writers at once give a dense seq from 0, and a key
// written twice is written once.
func TestAppendsKeepSeqDenseAndKeysOnce(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	const id = "local:web:dense"
	if _, err := st.Create(ctx, store.Conversation{ID: id, Source: "web", SourceJS: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				rows := []store.Row{{Type: "message_handled", Key: fmt.Sprintf("message:m%d:handled", i), Payload: map[string]any{"messageId": i}},
					{Type: "tool_execution_started", Payload: map[string]any{"writer": g, "i": i}}}
				if _, err := st.Append(ctx, id, rows...); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	events, err := st.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for i, e := range events {
		if e.Seq != i {
			t.Fatalf("row %d has seq %d", i, e.Seq)
		}
		if e.Key != nil {
			keys[*e.Key]++
		}
	}
	if len(events) != 10+80 || len(keys) != 10 {
		t.Fatalf("%d rows, %d keys; want 90 and 10", len(events), len(keys))
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("key %s written %d times", k, n)
		}
	}
}

func TestOpenTwiceIsANoOp(t *testing.T) {
	url := pgtest.NewDatabase(t)
	for range 2 {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	if _, err := store.Open(context.Background(), "postgres://127.0.0.1:1/none?connect_timeout=2"); err == nil {
		t.Fatal("a database nobody serves opened")
	}
}
