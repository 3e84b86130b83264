// Package juniortest builds conversations the way getsentry/junior writes
// them (rows of junior_conversation_events, identities, users) and inserts
// them into a database with plain SQL, independently of the loader, so that
// tests of export and load compare against rows the product itself would
// have written. Every personal value it makes up is fake: names from a fixed
// list, emails on example.com, Slack ids that belong to nobody.
package juniortest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/history"
)

// Conversation is one conversation as the product stores it, uncopied rows
// included.
type Conversation struct {
	ID         string
	Source     string // junior_conversations.source
	Surface    history.Surface
	Title      string
	Identities []history.Identity
	Events     []history.Event
}

// Builder appends the rows of real turns to a conversation.
type Builder struct {
	c     *Conversation
	seq   int64
	hv    int64
	clock int64 // ms
	turns int
}

// Slack starts a Slack thread conversation in channel.
func Slack(channel, threadTs string) *Builder {
	return &Builder{c: &Conversation{
		ID: "slack:" + channel + ":" + threadTs, Source: "slack", Surface: history.SurfaceSlack, Title: "Deploy checklist",
	}, clock: 1790000000000}
}

// Web starts a web (dashboard) conversation.
func Web(hash string) *Builder {
	return &Builder{c: &Conversation{
		ID: "local:web:" + hash, Source: "web", Surface: history.SurfaceWeb, Title: "Launch plan",
	}, clock: 1790889786037}
}

// Conversation returns what was built.
func (b *Builder) Conversation() *Conversation { return b.c }

// SlackPerson adds a Slack user identity with its junior_users row.
func (b *Builder) SlackPerson(n int, team, userID, fullName string) history.Identity {
	handle := strings.ToLower(strings.ReplaceAll(fullName, " ", "."))
	email := handle + "@example.com"
	id := history.Identity{
		ID: uuid("identity", n), Kind: "user", Provider: "slack",
		ProviderTenantID: team, ProviderSubjectID: userID,
		DisplayName: ptr(fullName), Handle: ptr(handle), Email: ptr(email), EmailNormalized: ptr(email),
		EmailVerified: true, Metadata: json.RawMessage(`{"platform":"slack"}`),
		CreatedAtMs: b.clock - 86400000, UpdatedAtMs: b.clock - 3600000,
		User: &history.User{ID: uuid("user", n), PrimaryEmail: ptr(email),
			PrimaryEmailNormalized: ptr(email), DisplayName: ptr(fullName), Timezone: ptr("Europe/Vienna"),
			CreatedAtMs: b.clock - 86400000, UpdatedAtMs: b.clock - 3600000},
	}
	b.c.Identities = append(b.c.Identities, id)
	return id
}

// WebPerson adds a dashboard user identity (provider junior, by email).
func (b *Builder) WebPerson(n int, fullName string) history.Identity {
	email := strings.ToLower(strings.ReplaceAll(fullName, " ", ".")) + "@example.com"
	id := history.Identity{
		ID: uuid("web-identity", n), Kind: "user", Provider: "junior",
		ProviderSubjectID: email, DisplayName: ptr(fullName), Email: ptr(email), EmailNormalized: ptr(email),
		EmailVerified: true, CreatedAtMs: b.clock - 86400000, UpdatedAtMs: b.clock - 86400000,
	}
	b.c.Identities = append(b.c.Identities, id)
	return id
}

// Gap skips n seqs, as rows dropped by an earlier fork leave holes.
func (b *Builder) Gap(n int64) *Builder {
	b.seq += n
	return b
}

// Uncopied adds rows of the types a fork never copies.
func (b *Builder) Uncopied(actor history.Identity) *Builder {
	b.row("authorization_requested", 1, "", map[string]any{"kind": "mcp", "provider": "github", "actorId": actor.ProviderSubjectID,
		"authorizationId": "auth_01", "delivery": "private_link_sent"})
	b.row("structured_event", 1, "", map[string]any{"namespace": "memory", "name": "memories_captured", "version": 2,
		"content": map[string]any{"memories": []any{map[string]any{"scope": "private", "content": "prefers short replies"}}}})
	return b
}

// Compaction replaces the model history with a summary and starts a new
// history version, as Junior's replaceHistory does.
func (b *Builder) Compaction(summary string) *Builder {
	b.hv++
	item := map[string]any{"type": "user_message", "message": encode(map[string]any{
		"content": []any{map[string]any{"type": "text", "text": "<summary>" + summary + "</summary>"}}, "timestamp": b.clock})}
	b.row("compaction", 1, "", map[string]any{"modelProfile": "standard", "modelId": "xai/grok-4.5",
		"details": map[string]any{"reason": "capacity", "estimatedInputTokens": 180000, "triggerTokens": 160000,
			"inputLimitTokens": 200000, "inputMessageCount": 14, "retainedMessageCount": 0, "summaryChars": len(summary)},
		"summary": summary, "replacementHistory": []any{map[string]any{"item": item}}})
	return b
}

// Tool is one tool call a turn makes before its reply.
type Tool struct {
	Name   string
	Args   map[string]any
	Result string
}

// Turn adds one complete turn: the person's message, the turn lifecycle,
// the model history (context, instruction, tool calls and results, reply)
// and the delivered reply. It returns the reply's message id.
func (b *Builder) Turn(author history.Identity, text, reply string, tools ...Tool) string {
	b.turns++
	slack := b.c.Surface == history.SurfaceSlack
	var msgID, userID string
	meta := map[string]any{"replied": false, "explicitMention": true}
	actor := map[string]any{"email": deref(author.Email), "userName": deref(author.DisplayName)}
	if slack {
		msgID = fmt.Sprintf("1790000%03d.000%03d", b.turns, b.turns*100)
		userID = author.ProviderSubjectID
		meta["author"] = map[string]any{"fullName": deref(author.DisplayName), "isBot": false, "userId": userID, "userName": deref(author.Handle)}
		meta["source"], meta["slackTs"], meta["attachmentCount"], meta["imagesHydrated"] = "slack", msgID, 0, false
		actor = map[string]any{"platform": "slack", "teamId": author.ProviderTenantID, "userId": userID,
			"userName": deref(author.Handle), "fullName": deref(author.DisplayName), "email": deref(author.Email)}
	} else {
		msgID = fmt.Sprintf("api-msg:%024x", b.turns*7919)
		userID = fmt.Sprintf("dashboard:%016x", 48611)
		meta["author"] = map[string]any{"email": deref(author.Email), "userId": userID, "userName": deref(author.DisplayName)}
		meta["source"] = "web"
		actor["platform"], actor["userId"] = "web", userID
	}
	turnID := "turn_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, msgID)
	replyID := turnID + ":assistant:1"
	surface := "api"
	if slack {
		surface = "slack"
	}
	message := map[string]any{"messageId": msgID, "role": "user", "text": text, "meta": meta, "authorIdentityId": author.ID}
	b.actorRow("message", "message:"+msgID, message, author.ID)
	b.row("turn_started", 1, "turn:"+turnID+":started", map[string]any{"turnId": turnID, "surface": surface, "inputMessageIds": []string{msgID}})
	b.row("turn_routed", 1, "turn:"+turnID+":routed", map[string]any{"turnId": turnID, "modelProfile": "standard",
		"modelId": "xai/grok-4.5", "reasoningLevel": "high", "confidence": 0.75, "costUsd": 0.00147, "source": "router"})
	b.row("user_message", 2, "", map[string]any{"provenance": map[string]any{"authority": "context"},
		"message": encode(map[string]any{"content": []any{textPart(fmt.Sprintf(
			"<runtime-turn-context>\n<context>\n<actor>\n- user_name: %s\n- user_id: %s\n</actor>\n</context>\n</runtime-turn-context>",
			deref(author.DisplayName), userID))}, "timestamp": b.clock})})
	instruction := "<current-instruction>\n" + text + "\n</current-instruction>"
	if slack {
		instruction = fmt.Sprintf("<current-instruction author_id=%q author_name=%q slack_ts=%q>\n%s\n</current-instruction>",
			userID, deref(author.DisplayName), msgID, xmlEscape(text))
	}
	b.row("user_message", 2, "", map[string]any{"provenance": map[string]any{"authority": "instruction", "actor": actor},
		"message": encode(map[string]any{"content": []any{textPart(instruction)}, "timestamp": b.clock})})
	for i, tool := range tools {
		callID := fmt.Sprintf("call-%08x-%d", b.turns*1000+i, i)
		modelAt := b.clock
		b.clock += 2400
		// The tool runs after the model answered; the assistant row carries
		// the model's earlier timestamp, so createdAt goes backwards here.
		b.row("tool_execution_started", 1, "", map[string]any{"toolName": tool.Name, "toolCallId": callID})
		b.rowAt("assistant_message", 2, "", assistantPayload(modelAt, "toolUse", "tool_use",
			textPart("Checking."), map[string]any{"type": "toolCall", "id": callID, "name": tool.Name, "arguments": tool.Args}), modelAt)
		b.row("tool_result", 2, "", map[string]any{"toolCallId": callID, "message": encode(map[string]any{
			"toolCallId": callID, "toolName": tool.Name, "content": []any{textPart(tool.Result)},
			"details": map[string]any{}, "isError": false, "timestamp": b.clock})})
	}
	b.row("assistant_message", 2, "message:"+replyID+":agent", assistantPayload(b.clock, "stop", "end_turn",
		map[string]any{"type": "thinking", "thinking": "", "thinkingSignature": ""}, textPart(reply)))
	updated := map[string]any{"messageId": msgID, "role": "user", "text": text, "meta": meta}
	b.actorRow("message_updated", fmt.Sprintf("message:%s:update:%032x", msgID, b.turns), updated, author.ID)
	handledAt := b.clock
	b.row("message_handled", 1, "message:"+msgID+":handled", map[string]any{"messageId": msgID})
	botMeta := map[string]any{"author": map[string]any{"isBot": true, "userName": "junior-example"}, "source": meta["source"]}
	if slack {
		botMeta["slackTs"] = fmt.Sprintf("1790000%03d.000%03d", b.turns, b.turns*100+1)
	}
	b.rowAt("message", 1, "message:"+replyID, map[string]any{"messageId": replyID, "role": "assistant", "text": reply, "meta": botMeta}, handledAt-8)
	b.row("message_handled", 1, "message:"+replyID+":handled", map[string]any{"messageId": replyID})
	b.row("turn_completed", 1, "turn:"+turnID+":terminal", map[string]any{"turnId": turnID, "outcome": "success"})
	b.clock += 500
	return replyID
}

func (b *Builder) row(typ string, schemaVersion int64, key string, payload map[string]any) {
	b.clock += 17
	b.rowAt(typ, schemaVersion, key, payload, b.clock)
}

func (b *Builder) actorRow(typ, key string, payload map[string]any, actor string) {
	b.row(typ, 1, key, payload)
	b.c.Events[len(b.c.Events)-1].ActorIdentityID = &actor
}

func (b *Builder) rowAt(typ string, schemaVersion int64, key string, payload map[string]any, at int64) {
	raw, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	ev := history.Event{Seq: b.seq, Type: typ, HistoryVersion: b.hv, SchemaVersion: schemaVersion, CreatedAtMs: at, Payload: raw}
	if key != "" {
		ev.IdempotencyKey = &key
	}
	b.c.Events = append(b.c.Events, ev)
	b.seq++
}

func assistantPayload(at int64, stop, rawStop string, content ...map[string]any) map[string]any {
	usage := map[string]any{"input": 274, "output": 75, "cacheRead": 7296, "cacheWrite": 0, "totalTokens": 7645,
		"cost": map[string]any{"input": 0.000548, "output": 0.00045, "cacheRead": 0.0021888, "cacheWrite": 0, "total": 0.0031868}}
	return map[string]any{"model": "xai/grok-4.5", "provider": "vercel-ai-gateway", "usage": usage,
		"message": encode(map[string]any{"content": content, "api": "anthropic-messages", "provider": "vercel-ai-gateway",
			"model": "xai/grok-4.5", "usage": usage, "stopReason": stop, "timestamp": at,
			"responseId": fmt.Sprintf("gen_%026d", at), "rawStopReason": rawStop})}
}

func textPart(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

func ptr(s string) *string { return &s }

// uuid makes a random-looking, repeatable v4 UUID, as Junior's ids are.
func uuid(space string, n int) string {
	h := sha256.Sum256([]byte(fmt.Sprint(space, n)))
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Insert writes the conversation with plain SQL, as the product would: its
// users, identities, conversation row and every event row.
func (c *Conversation) Insert(ctx context.Context, conn *pgx.Conn) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, id := range c.Identities {
		if u := id.User; u != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO junior_users (id, primary_email, primary_email_normalized, display_name,
				timezone, is_admin, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
				u.ID, u.PrimaryEmail, u.PrimaryEmailNormalized, u.DisplayName, u.Timezone, u.IsAdmin,
				time.UnixMilli(u.CreatedAtMs), time.UnixMilli(u.UpdatedAtMs)); err != nil {
				return fmt.Errorf("user %s: %w", u.ID, err)
			}
		}
		var userID *string
		if id.User != nil {
			userID = &id.User.ID
		}
		if _, err := tx.Exec(ctx, `INSERT INTO junior_identities (id, kind, provider, provider_tenant_id, provider_subject_id,
			display_name, handle, email, avatar_url, metadata_json, created_at, updated_at, user_id, email_normalized, email_verified)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING`,
			id.ID, id.Kind, id.Provider, id.ProviderTenantID, id.ProviderSubjectID, id.DisplayName, id.Handle, id.Email,
			id.AvatarURL, []byte(id.Metadata), time.UnixMilli(id.CreatedAtMs), time.UnixMilli(id.UpdatedAtMs), userID,
			id.EmailNormalized, id.EmailVerified); err != nil {
			return fmt.Errorf("identity %s: %w", id.ID, err)
		}
	}
	var actor *string
	if len(c.Identities) > 0 {
		actor = &c.Identities[0].ID
	}
	first, last := time.UnixMilli(c.Events[0].CreatedAtMs), time.UnixMilli(c.Events[len(c.Events)-1].CreatedAtMs)
	if _, err := tx.Exec(ctx, `INSERT INTO junior_conversations (conversation_id, source, title, actor_identity_id,
		created_at, last_activity_at, updated_at, execution_status) VALUES ($1, $2, $3, $4, $5, $6, $6, 'idle')`,
		c.ID, c.Source, c.Title, actor, first, last); err != nil {
		return fmt.Errorf("conversation %s: %w", c.ID, err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"junior_conversation_events"},
		[]string{"conversation_id", "seq", "history_version", "schema_version", "idempotency_key", "type", "payload", "actor_identity_id", "created_at"},
		pgx.CopyFromSlice(len(c.Events), func(i int) ([]any, error) {
			e := c.Events[i]
			return []any{c.ID, e.Seq, e.HistoryVersion, e.SchemaVersion, e.IdempotencyKey, e.Type, []byte(e.Payload),
				e.ActorIdentityID, time.UnixMilli(e.CreatedAtMs)}, nil
		}))
	if err != nil {
		return fmt.Errorf("events of %s: %w", c.ID, err)
	}
	return tx.Commit(ctx)
}
