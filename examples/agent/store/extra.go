package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Automation is a scheduled task. Its runs post to a Slack channel (a
// DM's, when the channel is one), or, when WebUser is set, each run is a
// new web conversation of that user (by email), with no channel.
type Automation struct {
	ID, TeamID, ChannelID, Task string
	Interval                    time.Duration
	WebUser                     string
}

// ErrExists refuses an automation whose id is taken.
var ErrExists = errors.New("exists already")

// AddAutomation schedules a; its first run is due at next.
func (s *Store) AddAutomation(ctx context.Context, a Automation, next time.Time) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO agent_automations (id, team_id, channel_id, task, interval_seconds, next_run_at, web_user_email)
		VALUES ($1, $2, $3, $4, $5, $6, nullif($7, '')) ON CONFLICT (id) DO NOTHING`,
		a.ID, a.TeamID, a.ChannelID, a.Task, int(a.Interval/time.Second), next, a.WebUser)
	if err == nil && tag.RowsAffected() == 0 {
		return fmt.Errorf("store: automation %s: %w", a.ID, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: automation %s: %w", a.ID, err)
	}
	return nil
}

// TakeDue returns the automations due at now and moves each one's next
// run on by its interval, in one statement, so two heartbeats never run
// one automation twice.
func (s *Store) TakeDue(ctx context.Context, now time.Time) ([]Automation, error) {
	rows, err := s.pool.Query(ctx, `UPDATE agent_automations
		SET next_run_at = $1 + make_interval(secs => interval_seconds)
		WHERE next_run_at <= $1
		RETURNING id, team_id, channel_id, task, interval_seconds, coalesce(web_user_email, '')`, now)
	if err != nil {
		return nil, fmt.Errorf("store: due automations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Automation, error) {
		var a Automation
		var secs int
		err := r.Scan(&a.ID, &a.TeamID, &a.ChannelID, &a.Task, &secs, &a.WebUser)
		a.Interval = time.Duration(secs) * time.Second
		return a, err
	})
}

// SaveCredential stores a provider token for a subject.
func (s *Store) SaveCredential(ctx context.Context, subject, provider, token string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO agent_credentials (subject, provider, token) VALUES ($1, $2, $3)
		ON CONFLICT (subject, provider) DO UPDATE SET token = EXCLUDED.token`, subject, provider, token)
	return err
}

// Credential returns the subject's token for provider, or "".
func (s *Store) Credential(ctx context.Context, subject, provider string) (string, error) {
	var token string
	err := s.pool.QueryRow(ctx, `SELECT token FROM agent_credentials WHERE subject = $1 AND provider = $2`, subject, provider).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return token, err
}

// Started is a conversation and when it was made.
type Started struct {
	ID        string    `json:"conversationId"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"createdAt"`
}

// ConversationsSince lists the conversations made at or after t, oldest
// first.
func (s *Store) ConversationsSince(ctx context.Context, t time.Time) ([]Started, error) {
	rows, err := s.pool.Query(ctx, `SELECT conversation_id, coalesce(source, ''), created_at FROM junior_conversations
		WHERE created_at >= $1 ORDER BY created_at, conversation_id`, t)
	if err != nil {
		return nil, fmt.Errorf("store: conversations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Started, error) {
		var c Started
		err := r.Scan(&c.ID, &c.Source, &c.CreatedAt)
		return c, err
	})
}
