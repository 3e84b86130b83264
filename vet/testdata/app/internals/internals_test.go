package internals_test

import (
	"context"
	"database/sql" // want `internals: database/sql reads or writes the app's database: read what the agent did from the call`
	"testing"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/loader" // want `internals: github.com/agentvcr/agentvcr/loader reads or writes the app's database`
	"github.com/jackc/pgx/v5"             // want `internals: github.com/jackc/pgx/v5 reads or writes`

	"example.com/bot/bottest"
)

func TestInternals(t *testing.T) {
	f := fixture.New(t, bottest.App(), fixture.ScriptedModel())
	conn, err := pgx.Connect(context.Background(), f.DatabaseURL()) // want `internals: f.DatabaseURL\(\) hands the test the app's database`
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Exec(context.Background(), "DELETE FROM messages")
	// Through the public test support, into the app's runtime.
	if bottest.Store(f).Count() != 0 { // want `internals: \(\*agent.Store\).Count is a call into the app's runtime \(example.com/bot/agent\)`
		t.Fatal("stored")
	}
	_, _ = sql.ErrNoRows, loader.Load
}
