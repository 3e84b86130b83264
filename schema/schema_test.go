package schema

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestLookupUnknownProfile(t *testing.T) {
	_, err := Lookup("zendesk")
	if !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), "junior") {
		t.Fatalf("error %v; want ErrUnknownProfile naming the known profiles", err)
	}
}

func TestApplyIsIdempotentAndMatchesPublicSchema(t *testing.T) {
	ctx := context.Background()
	conn := pgtest.Connect(t, pgtest.NewDatabase(t))
	p, err := Lookup("")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.Apply(ctx, conn); err != nil {
			t.Fatal(err)
		}
	}

	// Every NOT NULL column a loader must fill, by table.
	notNull := map[string][]string{}
	rows, err := conn.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND is_nullable = 'NO' ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		notNull[table] = append(notNull[table], col)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"junior_conversation_events": "conversation_id seq history_version schema_version type payload created_at",
		"junior_conversations":       "conversation_id schema_version created_at last_activity_at updated_at execution_status duration_ms execution_duration_ms",
		"junior_identities":          "id kind provider provider_tenant_id provider_subject_id created_at updated_at email_verified",
		"junior_users":               "id is_admin created_at updated_at",
	}
	for table, cols := range want {
		if got := strings.Join(notNull[table], " "); got != cols {
			t.Errorf("%s NOT NULL columns:\n got %s\nwant %s", table, got, cols)
		}
	}

	var constraints []string
	rows, err = conn.Query(ctx, `SELECT conname || ':' || pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'junior_conversation_events'::regclass ORDER BY conname`)
	if err != nil {
		t.Fatal(err)
	}
	constraints, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(constraints, "\n")
	for _, c := range []string{
		"junior_conversation_events_conversation_id_seq_pk:PRIMARY KEY (conversation_id, seq)",
		"FOREIGN KEY (conversation_id) REFERENCES junior_conversations(conversation_id)",
		"FOREIGN KEY (actor_identity_id) REFERENCES junior_identities(id)",
	} {
		if !strings.Contains(got, c) {
			t.Errorf("events table lacks %q; has:\n%s", c, got)
		}
	}
	var indexes int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'junior_conversation_events'`).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if indexes != 6 {
		t.Errorf("events table has %d indexes; want 6 (pk, idempotency, history version, type, actor, message search)", indexes)
	}
	// The idempotency index lets NULL keys repeat but not equal ones.
	if _, err := conn.Exec(ctx, `INSERT INTO junior_conversations (conversation_id) VALUES ('c')`); err != nil {
		t.Fatal(err)
	}
	ins := `INSERT INTO junior_conversation_events (conversation_id, seq, history_version, idempotency_key, type, payload, created_at)
		VALUES ('c', $1, 0, $2, 'message', '{}', now())`
	for seq, key := range []any{nil, nil, "k"} {
		if _, err := conn.Exec(ctx, ins, seq, key); err != nil {
			t.Fatalf("seq %d: %v", seq, err)
		}
	}
	if _, err := conn.Exec(ctx, ins, 3, "k"); err == nil {
		t.Error("a repeated idempotency key was accepted")
	}
}

func TestProfileNames(t *testing.T) {
	p, err := Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	p.Columns = map[string]string{"events.seq": "event_seq"}
	query, want := "SELECT {events.seq}, i.{identities.id} FROM {events}", `SELECT "event_seq", i."id" FROM "junior_conversation_events"`
	if got := p.SQL(query); got != want {
		t.Errorf("SQL(%q) = %q; want %q", query, got, want)
	}
	for _, bad := range []string{"SELECT {events.sequence}", "SELECT {messages}", "SELECT {events.seq"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SQL(%q) did not panic", bad)
				}
			}()
			p.SQL(bad)
		}()
	}
	p.Columns["events.sequence"] = "seq"
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), `Columns["events.sequence"]`) {
		t.Errorf("Check of a misspelt column: %v", err)
	}
}
