package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/schema"
	"github.com/jackc/pgx/v5"
)

// database is the agent's database, as the fixture makes it for the
// agent: the store's schema applied, nothing else in it.
func database(t *testing.T) string {
	t.Helper()
	return fixture.New(t, agenttest.App(nil)).DatabaseURL()
}

func open(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// Appends from many writers at once give a dense seq from 0, and a key
// written twice is written once.
func TestAppendsKeepSeqDenseAndKeysOnce(t *testing.T) {
	ctx := t.Context()
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
	url := database(t)
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

// The agent names Junior's tables itself (schema.sql); agentvcr's junior
// profile names them too, for export and load. They agree: every table
// and column export and load use is in the agent's database, and
// applying the profile's DDL to it changes nothing that fails.
func TestTheAgentsTablesAreJuniorsProfile(t *testing.T) {
	url := database(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	p, err := schema.Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	for logical, table := range map[string]string{"users": p.Tables.Users, "identities": p.Tables.Identities,
		"conversations": p.Tables.Conversations, "events": p.Tables.Events} {
		rows, err := conn.Query(t.Context(), `SELECT column_name FROM information_schema.columns WHERE table_name = $1`, table)
		if err != nil {
			t.Fatal(err)
		}
		have, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if len(have) == 0 {
			t.Errorf("the agent has no table %s", table)
			continue
		}
		for _, c := range schema.LogicalColumns(logical) {
			if col := p.Column(logical + "." + c); !slices.Contains(have, col) {
				t.Errorf("the agent's %s has no column %s, which export and load use", table, col)
			}
		}
	}
	if err := p.Apply(t.Context(), conn); err != nil {
		t.Fatalf("Junior's DDL on the agent's database: %v", err)
	}
}
