package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// EventFilter says which events an event automation or a watch takes:
// those of Source whose type is Type, or within it up to a dot ("issues"
// takes "issues.opened"), or any type when Type is empty; and whose
// resource is Resource, or any when Resource is empty.
type EventFilter struct {
	Source, Type, Resource string
}

// matches is the SQL of EventFilter's rule for a table's source, type and
// resource columns against the event's $1 source, $2 type, $3 resource.
const matches = `source = $1 AND (type = '' OR type = $2 OR starts_with($2, type || '.')) AND (resource = '' OR resource = $3)`

// EventAutomation runs Task when an event matches Filter, and posts what
// the agent answers to a Slack channel.
type EventAutomation struct {
	ID                string
	Filter            EventFilter
	Task              string
	TeamID, ChannelID string
}

// Watch tells a conversation of the events that match Filter; Intent is
// why it watches, for the model.
type Watch struct {
	ID, ConversationID string
	Filter             EventFilter
	Intent             string
}

// RecordEvent keeps an event the agent received and says whether it is
// new: a provider delivers again when it is unsure, and the agent must
// not act twice on one delivery (source and id name it).
func (s *Store) RecordEvent(ctx context.Context, source, id, typ, resource string, payload json.RawMessage) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO agent_events (source, id, type, resource, payload) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (source, id) DO NOTHING`, source, id, typ, resource, string(payload))
	if err != nil {
		return false, fmt.Errorf("store: event %s %s: %w", source, id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// AddEventAutomation stores a; an id that is taken is ErrExists.
func (s *Store) AddEventAutomation(ctx context.Context, a EventAutomation) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO agent_event_automations (id, source, type, resource, task, team_id, channel_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
		a.ID, a.Filter.Source, a.Filter.Type, a.Filter.Resource, a.Task, a.TeamID, a.ChannelID)
	if err != nil {
		return fmt.Errorf("store: event automation %s: %w", a.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: event automation %s: %w", a.ID, ErrExists)
	}
	return nil
}

// AddWatch stores w; an id that is taken is ErrExists, a conversation
// that does not exist ErrNotFound.
func (s *Store) AddWatch(ctx context.Context, w Watch) error {
	var inserted, conv bool
	err := s.pool.QueryRow(ctx, `WITH conv AS (SELECT 1 FROM junior_conversations WHERE conversation_id = $2),
		ins AS (INSERT INTO agent_watches (id, conversation_id, source, type, resource, intent)
			SELECT $1, $2, $3, $4, $5, $6 FROM conv ON CONFLICT (id) DO NOTHING RETURNING 1)
		SELECT EXISTS (SELECT 1 FROM ins), EXISTS (SELECT 1 FROM conv)`,
		w.ID, w.ConversationID, w.Filter.Source, w.Filter.Type, w.Filter.Resource, w.Intent).Scan(&inserted, &conv)
	switch {
	case err != nil:
		return fmt.Errorf("store: watch %s: %w", w.ID, err)
	case !conv:
		return fmt.Errorf("store: watch %s: %w: %s", w.ID, ErrNotFound, w.ConversationID)
	case !inserted:
		return fmt.Errorf("store: watch %s: %w", w.ID, ErrExists)
	}
	return nil
}

// EventAutomations are the event automations the event matches, by id.
func (s *Store) EventAutomations(ctx context.Context, source, typ, resource string) ([]EventAutomation, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, source, type, resource, task, team_id, channel_id FROM agent_event_automations
		WHERE `+matches+` ORDER BY id`, source, typ, resource)
	if err != nil {
		return nil, fmt.Errorf("store: event automations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (EventAutomation, error) {
		var a EventAutomation
		err := r.Scan(&a.ID, &a.Filter.Source, &a.Filter.Type, &a.Filter.Resource, &a.Task, &a.TeamID, &a.ChannelID)
		return a, err
	})
}

// Watches are the watches the event matches, by conversation and id.
func (s *Store) Watches(ctx context.Context, source, typ, resource string) ([]Watch, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, conversation_id, source, type, resource, intent FROM agent_watches
		WHERE `+matches+` ORDER BY conversation_id, id`, source, typ, resource)
	if err != nil {
		return nil, fmt.Errorf("store: watches: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Watch, error) {
		var w Watch
		err := r.Scan(&w.ID, &w.ConversationID, &w.Filter.Source, &w.Filter.Type, &w.Filter.Resource, &w.Intent)
		return w, err
	})
}

// CountAutomated counts one more automated input of conversation id and
// returns how many it has had since a person's last message, this one
// included. A person's message is a user message row whose meta.source
// is not one of automated (the sources of the agent's own inputs). It is
// one statement: inputs counted at once, by any number of agents on the
// database, each get their own number.
func (s *Store) CountAutomated(ctx context.Context, id string, automated []string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `WITH person AS (
			SELECT coalesce(max(seq), -1) AS seq FROM junior_conversation_events
			WHERE conversation_id = $1 AND type = 'message' AND payload->>'role' = 'user'
				AND NOT coalesce(payload->'meta'->>'source', '') = ANY ($2))
		INSERT INTO agent_automated_turns AS t (conversation_id, person_seq, count)
		SELECT $1, seq, 1 FROM person
		ON CONFLICT (conversation_id) DO UPDATE SET
			count = CASE WHEN EXCLUDED.person_seq > t.person_seq THEN 1 ELSE t.count + 1 END,
			person_seq = greatest(t.person_seq, EXCLUDED.person_seq)
		RETURNING count`, id, automated).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count the automated inputs of %s: %w", id, err)
	}
	return n, nil
}
