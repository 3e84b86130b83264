package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Memory is a fact the agent remembers across conversations: about a user
// (User, their email), or the workspace's when User is "".
type Memory struct {
	ID      string
	User    string
	Content string
	// Source is who wrote it: admin, or extraction (the memory plugin,
	// after a turn of ConversationID).
	Source         string
	ConversationID string
	CreatedAt      time.Time
}

// AddMemory stores m once: a second memory with its id is skipped, so a
// retried extraction writes nothing twice. It says whether m was new.
func (s *Store) AddMemory(ctx context.Context, m Memory) (bool, error) {
	subject := "general"
	if m.User != "" {
		subject = "user"
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO agent_memories (id, subject_type, subject_key, content, source, conversation_id)
		VALUES ($1, $2, $3, $4, $5, nullif($6, '')) ON CONFLICT (id) DO NOTHING`,
		m.ID, subject, strings.ToLower(m.User), m.Content, m.Source, m.ConversationID)
	if err != nil {
		return false, fmt.Errorf("store: memory %s: %w", m.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Recall returns the memories a turn of user (an email, or "" for a turn
// of nobody's, such as an automation's) knows: the user's own and the
// workspace's, the newest limit of them, oldest first.
func (s *Store) Recall(ctx context.Context, user string, limit int) ([]Memory, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, subject_key, content, source, coalesce(conversation_id, ''), created_at
		FROM agent_memories
		WHERE subject_type = 'general' OR (subject_type = 'user' AND subject_key = $1 AND $1 <> '')
		ORDER BY created_at DESC, id DESC LIMIT $2`, strings.ToLower(user), limit)
	if err != nil {
		return nil, fmt.Errorf("store: recall memories: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Memory, error) {
		var m Memory
		err := r.Scan(&m.ID, &m.User, &m.Content, &m.Source, &m.ConversationID, &m.CreatedAt)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: recall memories: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
