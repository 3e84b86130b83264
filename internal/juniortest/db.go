package juniortest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/schema"
)

// Database returns the URL of a fresh database with the junior schema
// applied, and a connection to it that is closed at the end of the test.
func Database(t testing.TB) (string, *pgx.Conn) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, url)
	p, err := schema.Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	return url, conn
}

// Insert writes c into the database behind conn, failing the test on error.
func Insert(t testing.TB, conn *pgx.Conn, c *Conversation) {
	t.Helper()
	if err := c.Insert(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
}

// Uncopied reports whether Junior's fork skips rows of eventType, as the
// junior profile says.
func Uncopied(eventType string) bool {
	p, err := schema.Lookup("junior")
	return err == nil && p.Uncopied(eventType)
}
