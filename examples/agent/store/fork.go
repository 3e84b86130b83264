package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ErrBadCutPoint refuses a fork at a message that is not a delivered,
// finished reply of the agent.
var ErrBadCutPoint = errors.New("not a delivered reply to fork at")

// uncopied are the event types a fork leaves behind, as Junior's
// copyForkEvents does: approvals, credentials and plugin events belong to
// the source.
var uncopied = []string{"authorization_completed", "authorization_requested", "guardian_action_reviewed",
	"mcp_provider_connected", "mcp_provider_connected_unowned", "structured_event", "unknown"}

// ForkNote is the text of the context row a fork ends with.
const ForkNote = "This Conversation is a fork of an earlier one. Sandbox files, active work, approvals, credentials, " +
	"Watches, Automations, and the delivery location were not copied; continue from the copied history."

// Fork copies the source conversation's rows up to the delivered reply
// messageID into a new web conversation fork (whose row it creates from
// c), in SQL, as Junior's copyForkEvents does: the same seq, versions,
// keys, types, payloads, actors and times; the types a fork leaves behind
// dropped; after the cut, only the rows that close copied messages and
// turns; then a fork:note row. It returns false when fork exists already
// (a retry), and writes nothing.
func (s *Store) Fork(ctx context.Context, source, messageID string, c Conversation) (bool, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	for _, id := range []string{source, c.ID} {
		if err := lock(ctx, tx, id); err != nil {
			return false, err
		}
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM junior_conversations WHERE conversation_id = $1)`, c.ID).Scan(&exists); err != nil {
		return false, err
	}
	if exists {
		return false, nil
	}
	var title *string
	if err := tx.QueryRow(ctx, `SELECT title FROM junior_conversations WHERE conversation_id = $1 AND transcript_purged_at IS NULL`,
		source).Scan(&title); errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("%w: %s", ErrNotFound, source)
	} else if err != nil {
		return false, err
	}
	var boundary int
	var typ string
	var payload json.RawMessage
	err = tx.QueryRow(ctx, `SELECT seq, type, payload FROM junior_conversation_events WHERE conversation_id = $1 AND idempotency_key = $2`,
		source, "message:"+messageID+":agent").Scan(&boundary, &typ, &payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("%w: %s has no agent message for %q", ErrBadCutPoint, source, messageID)
	}
	if err != nil {
		return false, err
	}
	if why := finishedReply(typ, payload); why != "" {
		return false, fmt.Errorf("%w: %s", ErrBadCutPoint, why)
	}
	if open, err := unfinishedCalls(ctx, tx, source, boundary); err != nil {
		return false, err
	} else if len(open) > 0 {
		return false, fmt.Errorf("%w: tool calls %v have no result by then", ErrBadCutPoint, open)
	}
	c.Title = "Forked conversation"
	if title != nil && *title != "" {
		c.Title = "Fork: " + *title
	}
	c.ForkedFrom = source
	if err := insertConversation(ctx, tx, c); err != nil {
		return false, err
	}
	// The cut is the later of the agent message and its visible reply.
	if _, err := tx.Exec(ctx, `
		WITH cut AS (
			SELECT greatest($3::int, coalesce((SELECT max(seq) FROM junior_conversation_events
				WHERE conversation_id = $1 AND type = 'message' AND payload->>'messageId' = $4), $3)) AS seq
		), kept AS (
			SELECT e.* FROM junior_conversation_events e, cut
			WHERE e.conversation_id = $1 AND e.seq <= cut.seq AND NOT (e.type = ANY($5))
		), closing AS (
			SELECT e.* FROM junior_conversation_events e, cut
			WHERE e.conversation_id = $1 AND e.seq > cut.seq AND (
				(e.type IN ('message_updated', 'message_handled') AND e.payload->>'messageId' IN
					(SELECT payload->>'messageId' FROM kept WHERE type = 'message'))
				OR (e.type IN ('turn_completed', 'turn_failed') AND e.payload->>'turnId' IN
					(SELECT payload->>'turnId' FROM kept WHERE type = 'turn_started')))
		), copied AS (
			SELECT * FROM kept UNION ALL SELECT * FROM closing
		)
		INSERT INTO junior_conversation_events (conversation_id, seq, history_version, schema_version, idempotency_key,
			type, payload, actor_identity_id, created_at)
		SELECT $2, seq, least(history_version, (SELECT max(history_version) FROM kept)), schema_version, idempotency_key,
			type, payload, actor_identity_id, created_at
		FROM copied`, source, c.ID, boundary, messageID, uncopied); err != nil {
		return false, fmt.Errorf("store: copy %s into %s: %w", source, c.ID, err)
	}
	note, _ := marshal(map[string]any{
		"message":    UserText(ForkNote, nowMs()),
		"provenance": map[string]any{"authority": "context"},
	})
	if _, err := tx.Exec(ctx, `INSERT INTO junior_conversation_events
			(conversation_id, seq, history_version, schema_version, idempotency_key, type, payload, created_at)
		SELECT $1, max(seq) + 1, max(history_version), 2, 'fork:note', 'user_message', $2, now()
		FROM junior_conversation_events WHERE conversation_id = $1`, c.ID, note); err != nil {
		return false, fmt.Errorf("store: fork note: %w", err)
	}
	return true, tx.Commit(ctx)
}

// unfinishedCalls lists the tool calls of the history up to seq that
// have no result there.
func unfinishedCalls(ctx context.Context, tx pgx.Tx, id string, seq int) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT type, payload->>'message' FROM junior_conversation_events
		WHERE conversation_id = $1 AND seq <= $2 AND type IN ('assistant_message', 'tool_result') AND schema_version >= 2`, id, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	answered := map[string]bool{}
	var calls []string
	for rows.Next() {
		var typ string
		var msg *string
		if err := rows.Scan(&typ, &msg); err != nil {
			return nil, err
		}
		if msg == nil {
			continue
		}
		var m struct {
			ToolCallID string `json:"toolCallId"`
			Content    []struct{ Type, ID string }
		}
		json.Unmarshal([]byte(*msg), &m)
		if typ == "tool_result" {
			answered[m.ToolCallID] = true
			continue
		}
		for _, c := range m.Content {
			if c.Type == "toolCall" {
				calls = append(calls, c.ID)
			}
		}
	}
	var open []string
	for _, c := range calls {
		if !answered[c] {
			open = append(open, c)
		}
	}
	return open, rows.Err()
}

// finishedReply says why an agent message is no place to fork, or "".
func finishedReply(typ string, payload json.RawMessage) string {
	if typ != "assistant_message" {
		return "the row is a " + typ
	}
	var p struct{ Message string }
	json.Unmarshal(payload, &p)
	var m struct {
		StopReason string `json:"stopReason"`
		Content    []struct{ Type string }
	}
	if err := json.Unmarshal([]byte(p.Message), &m); err != nil {
		return "the agent message is unreadable"
	}
	if m.StopReason != "stop" {
		return "the agent message stopped for " + m.StopReason
	}
	for _, c := range m.Content {
		if c.Type == "toolCall" {
			return "the agent message calls a tool"
		}
	}
	return ""
}
