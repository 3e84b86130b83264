package store

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned for a conversation that does not exist.
var ErrNotFound = errors.New("no such conversation")

// ddl makes the agent's tables: schema.sql is the one place that names
// them and their columns.
//
//go:embed schema.sql
var ddl string

// Store is the agent's database.
type Store struct {
	pool *pgxpool.Pool
}

// Open connects to url and applies the agent's schema (schema.sql) under
// a lock, so that agents starting at once on one database do not race.
// Applying twice is a no-op.
func Open(ctx context.Context, url string) (*Store, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("store: DATABASE_URL: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool}, nil
}

func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("store: apply the schema: %w", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('examples/agent schema'))"); err != nil {
		return fmt.Errorf("store: apply the schema: %w", err)
	}
	if _, err := tx.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("store: apply the schema: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("store: apply the schema: %w", err)
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Conversation is the part of a conversation row the agent reads.
type Conversation struct {
	ID         string
	Source     string          // slack, web, scheduler
	SourceJS   json.RawMessage // source_json
	Actor      json.RawMessage // actor_json, or nil
	Title      string
	ForkedFrom string
}

// Event is one row of the event log.
type Event struct {
	Seq            int
	HistoryVersion int
	SchemaVersion  int
	Key            *string
	Type           string
	Payload        json.RawMessage
	CreatedAt      time.Time
}

// Row is an event to append. SchemaVersion 0 means 1; an empty Key is
// NULL.
type Row struct {
	Type          string
	Key           string
	SchemaVersion int
	Payload       any
	// NewHistory starts a new history_version with this row, as
	// compaction's replaceHistory does.
	NewHistory bool
}

// lock takes the conversation's event lock for the transaction: every
// writer of its log (appends, forks) takes it, so seq stays dense.
func lock(ctx context.Context, tx pgx.Tx, id string) error {
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "conversation events "+id); err != nil {
		return fmt.Errorf("store: lock %s: %w", id, err)
	}
	return nil
}

// insertConversation writes c's row unless one exists; the destination
// is the source, as for Junior's web and Slack roots.
func insertConversation(ctx context.Context, tx pgx.Tx, c Conversation) error {
	_, err := tx.Exec(ctx, `INSERT INTO junior_conversations (conversation_id, source, source_json, actor_json, destination_json,
			forked_from_conversation_id, title, execution_status)
		VALUES ($1, $2, $3, $4, $3, nullif($5, ''), nullif($6, ''), 'idle') ON CONFLICT DO NOTHING`,
		c.ID, c.Source, []byte(c.SourceJS), nullJSON(c.Actor), c.ForkedFrom, c.Title)
	if err != nil {
		return fmt.Errorf("store: create conversation %s: %w", c.ID, err)
	}
	return nil
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}

// Conversation reads a conversation row.
func (s *Store) Conversation(ctx context.Context, id string) (Conversation, error) {
	c := Conversation{ID: id}
	var source, title, forked *string
	err := s.pool.QueryRow(ctx, `SELECT source, source_json, actor_json, title, forked_from_conversation_id
		FROM junior_conversations WHERE conversation_id = $1`, id).Scan(&source, &c.SourceJS, &c.Actor, &title, &forked)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return c, fmt.Errorf("store: conversation %s: %w", id, err)
	}
	c.Source, c.Title, c.ForkedFrom = deref(source), deref(title), deref(forked)
	return c, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// SetTitle names a conversation.
func (s *Store) SetTitle(ctx context.Context, id, title string) error {
	_, err := s.pool.Exec(ctx, `UPDATE junior_conversations SET title = $2, updated_at = now() WHERE conversation_id = $1`, id, title)
	return err
}

// Append writes rows at the end of the conversation's log, in one
// transaction under the conversation's lock: each gets max(seq)+1 and the
// current history_version. A row whose idempotency key is taken is
// skipped, as Junior's appends are; Append returns the seqs it wrote.
func (s *Store) Append(ctx context.Context, id string, rows ...Row) ([]int, error) {
	return s.write(ctx, nil, id, rows)
}

// Create is Append to conversation c, which it creates first if it does
// not exist, in the same transaction: a conversation is never left
// without the row that made it.
func (s *Store) Create(ctx context.Context, c Conversation, rows ...Row) ([]int, error) {
	return s.write(ctx, &c, c.ID, rows)
}

func (s *Store) write(ctx context.Context, create *Conversation, id string, rows []Row) ([]int, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: append to %s: %w", id, err)
	}
	defer tx.Rollback(ctx)
	if err := lock(ctx, tx, id); err != nil {
		return nil, err
	}
	if c := create; c != nil {
		if err := insertConversation(ctx, tx, *c); err != nil {
			return nil, err
		}
	}
	var seq, hv int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), -1), coalesce(max(history_version), 0)
		FROM junior_conversation_events WHERE conversation_id = $1`, id).Scan(&seq, &hv); err != nil {
		return nil, fmt.Errorf("store: append to %s: %w", id, err)
	}
	var written []int
	for _, r := range rows {
		payload, err := marshal(r.Payload)
		if err != nil {
			return nil, fmt.Errorf("store: %s row: %w", r.Type, err)
		}
		sv := r.SchemaVersion
		if sv == 0 {
			sv = 1
		}
		if r.NewHistory {
			hv++
		}
		var key any
		if r.Key != "" {
			key = r.Key
		}
		tag, err := tx.Exec(ctx, `INSERT INTO junior_conversation_events
				(conversation_id, seq, history_version, schema_version, idempotency_key, type, payload, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, now())
			ON CONFLICT (conversation_id, idempotency_key) DO NOTHING`,
			id, seq+1, hv, sv, key, r.Type, payload)
		if err != nil {
			return nil, fmt.Errorf("store: append %s to %s: %w", r.Type, id, err)
		}
		if tag.RowsAffected() == 1 {
			seq++
			written = append(written, seq)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE junior_conversations SET last_activity_at = now(), updated_at = now()
		WHERE conversation_id = $1`, id); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("store: append to %s: %w", id, err)
	}
	return written, nil
}

// Events reads the conversation's log in seq order.
func (s *Store) Events(ctx context.Context, id string) ([]Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, history_version, schema_version, idempotency_key, type, payload, created_at
		FROM junior_conversation_events WHERE conversation_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", id, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) {
		var e Event
		err := r.Scan(&e.Seq, &e.HistoryVersion, &e.SchemaVersion, &e.Key, &e.Type, &e.Payload, &e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", id, err)
	}
	return out, nil
}
