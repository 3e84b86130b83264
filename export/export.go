package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/version"
	"github.com/agentvcr/agentvcr/schema"
)

// ErrNotFound is returned when the conversation to export does not exist.
var ErrNotFound = errors.New("conversation not found")

// Exporter reads conversations from one database. The zero value is not
// usable: set DB.
type Exporter struct {
	// DB is the connection the exporter reads through.
	DB schema.Beginner
	// Profile is the product's schema; nil means the default profile.
	Profile *schema.Profile
	// WithIdentities adds the identity rows (and their users) that the
	// conversation and its events reference, and each row's
	// actorIdentityId.
	WithIdentities bool
	// Now stamps the export time; nil means time.Now.
	Now func() time.Time
	// Transform, if set, gets each whole exported document before anything
	// is written, and what it returns is written instead; an error writes
	// nothing. The sanitizer plugs in here, so raw personal data never
	// reaches the writer. The document is then held in memory.
	Transform func(doc []byte, conversationID string) ([]byte, error)
	// FileMode is the mode of the files ToDir writes; 0 means 0600, as an
	// untransformed export holds personal data.
	FileMode os.FileMode
}

// Result describes one exported conversation.
type Result struct {
	ConversationID string          `json:"conversationId"`
	Surface        history.Surface `json:"surface"`
	Events         int             `json:"events"`         // rows written
	Identities     int             `json:"identities"`     // identity rows written
	File           string          `json:"file,omitempty"` // set by ToDir
}

// Export writes the conversation id to w as recorded history. On error, w
// may hold part of a document: write to a temporary file and rename it (as
// ToDir does) when that matters.
func (e *Exporter) Export(ctx context.Context, id string, w io.Writer) (*Result, error) {
	p, err := e.profile()
	if err != nil {
		return nil, err
	}
	tx, err := e.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// A read-only snapshot: the header and the rows agree, and nothing here
	// can write to a production database.
	if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	out := w
	var buf bytes.Buffer
	if e.Transform != nil {
		out = &buf
	}
	res, err := e.export(ctx, tx, p, id, out)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, explain(err, p))
	}
	if e.Transform != nil {
		doc, err := e.Transform(buf.Bytes(), id)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", id, err)
		}
		if _, err := w.Write(doc); err != nil {
			return nil, fmt.Errorf("export %s: %w", id, err)
		}
	}
	return res, nil
}

func (e *Exporter) profile() (*schema.Profile, error) {
	if e.Profile != nil {
		return e.Profile, e.Profile.Check()
	}
	return schema.Lookup("")
}

func (e *Exporter) export(ctx context.Context, tx pgx.Tx, p *schema.Profile, id string, w io.Writer) (*Result, error) {
	var surface string
	err := tx.QueryRow(ctx, p.SQL(`SELECT `+surfaceExpr+` FROM {conversations} WHERE {conversations.conversation_id} = $1`), id).Scan(&surface)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	res := &Result{ConversationID: id, Surface: history.Surface(surface)}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	h := history.Header{
		Version: history.Version,
		Surface: res.Surface,
		Exporter: &history.Exporter{
			Tool:           "agentvcr",
			Version:        version.String(),
			Profile:        p.Name,
			ExportedAt:     now().UTC().Format(time.RFC3339),
			ConversationID: id,
		},
	}
	if e.WithIdentities {
		if h.Identities, err = identities(ctx, tx, p, id); err != nil {
			return nil, fmt.Errorf("identities: %w", err)
		}
		res.Identities = len(h.Identities)
	}

	actor := "NULL"
	if e.WithIdentities {
		actor = "{events.actor_identity_id}"
	}
	rows, err := tx.Query(ctx, p.SQL(`SELECT {events.seq}, {events.type}, {events.history_version}, {events.schema_version},
		{events.idempotency_key}, {events.created_at}, {events.payload}, `+actor+`
		FROM {events} WHERE {events.conversation_id} = $1 AND NOT ({events.type} = ANY($2)) ORDER BY {events.seq}`),
		id, p.UncopiedTypes)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hw := history.NewWriter(w, h)
	var (
		ev      history.Event
		created time.Time
		payload []byte
	)
	dest := []any{&ev.Seq, &ev.Type, &ev.HistoryVersion, &ev.SchemaVersion, &ev.IdempotencyKey,
		&created, &payload, &ev.ActorIdentityID}
	// A payload in text format is JSON as received: the writer takes it
	// from the row, where a copy of it would cost as much again. It is good
	// until the next row, and Write is done with it by then.
	const payloadColumn = 6
	asReceived := rows.FieldDescriptions()[payloadColumn].Format == pgx.TextFormatCode
	if asReceived {
		dest[payloadColumn] = nil // not scanned
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("row seq %d: %w", ev.Seq, err)
		}
		if asReceived {
			payload = rows.RawValues()[payloadColumn]
		}
		ev.CreatedAtMs = created.UnixMilli()
		ev.Payload = payload
		if err := hw.Write(ev); err != nil {
			return nil, fmt.Errorf("write seq %d: %w", ev.Seq, err)
		}
		res.Events++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := hw.Close(); err != nil {
		return nil, err
	}
	return res, nil
}

// surfaceExpr decides the surface the way Junior's recordings do: "slack"
// when the conversation was delivered to Slack, else "web".
const surfaceExpr = `CASE WHEN {conversations.conversation_id} LIKE 'slack:%' OR {conversations.source} = 'slack'
	OR {conversations.destination_json}->>'platform' = 'slack' THEN 'slack' ELSE 'web' END`

// identityColumns are the columns identityRow scans, of the identities i
// and the users u.
const identityColumns = `i.{identities.id}, i.{identities.kind}, i.{identities.provider}, i.{identities.provider_tenant_id},
	i.{identities.provider_subject_id}, i.{identities.display_name}, i.{identities.handle}, i.{identities.email},
	i.{identities.email_normalized}, i.{identities.email_verified}, i.{identities.avatar_url},
	i.{identities.metadata_json}, i.{identities.created_at}, i.{identities.updated_at},
	u.{users.id}, u.{users.primary_email}, u.{users.primary_email_normalized}, u.{users.display_name}, u.{users.timezone},
	coalesce(u.{users.is_admin}, false), u.{users.created_at}, u.{users.updated_at}`

// userColumns are the columns of the users u that the people query scans.
const userColumns = `u.{users.id}, u.{users.primary_email}, u.{users.primary_email_normalized}, u.{users.display_name},
	u.{users.timezone}, u.{users.is_admin}, u.{users.created_at}, u.{users.updated_at}`

func identities(ctx context.Context, tx pgx.Tx, p *schema.Profile, id string) ([]history.Identity, error) {
	rows, err := tx.Query(ctx, p.SQL(`
		WITH refs AS (
			SELECT {events.actor_identity_id} AS id FROM {events} WHERE {events.conversation_id} = $1
			UNION SELECT {events.payload}->>'authorIdentityId' FROM {events}
				WHERE {events.conversation_id} = $1 AND {events.type} IN ('message', 'message_updated')
			UNION SELECT unnest(ARRAY[{conversations.actor_identity_id}, {conversations.creator_identity_id},
					{conversations.credential_subject_identity_id}])
				FROM {conversations} WHERE {conversations.conversation_id} = $1
		)
		SELECT `+identityColumns+`
		FROM {identities} i LEFT JOIN {users} u ON u.{users.id} = i.{identities.user_id}
		WHERE i.{identities.id} IN (SELECT id FROM refs WHERE id IS NOT NULL)
		ORDER BY i.{identities.id}`), id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, identityRow)
}

func identityRow(row pgx.CollectableRow) (history.Identity, error) {
	var (
		i                 history.Identity
		created, updated  time.Time
		userID            *string
		u                 history.User
		uCreated, uUpdate *time.Time
	)
	err := row.Scan(&i.ID, &i.Kind, &i.Provider, &i.ProviderTenantID, &i.ProviderSubjectID,
		&i.DisplayName, &i.Handle, &i.Email, &i.EmailNormalized, &i.EmailVerified, &i.AvatarURL,
		&i.Metadata, &created, &updated,
		&userID, &u.PrimaryEmail, &u.PrimaryEmailNormalized, &u.DisplayName, &u.Timezone,
		&u.IsAdmin, &uCreated, &uUpdate)
	if err != nil {
		return i, err
	}
	i.CreatedAtMs, i.UpdatedAtMs = created.UnixMilli(), updated.UnixMilli()
	if userID != nil {
		u.ID = *userID
		u.CreatedAtMs, u.UpdatedAtMs = uCreated.UnixMilli(), uUpdate.UnixMilli()
		i.User = &u
	}
	return i, nil
}

// People returns every person the database knows, in a read-only
// transaction: each identity with its user, and the users no identity
// belongs to. The sanitizer learns them all, so that it finds a person
// named in a conversation they took no part in.
func (e *Exporter) People(ctx context.Context) ([]history.Identity, []history.User, error) {
	p, err := e.profile()
	if err != nil {
		return nil, nil, err
	}
	tx, err := e.DB.Begin(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"); err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	rows, err := tx.Query(ctx, p.SQL(`SELECT `+identityColumns+`
		FROM {identities} i LEFT JOIN {users} u ON u.{users.id} = i.{identities.user_id} ORDER BY i.{identities.id}`))
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", explain(err, p))
	}
	ids, err := pgx.CollectRows(rows, identityRow)
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	rows, err = tx.Query(ctx, p.SQL(`SELECT `+userColumns+` FROM {users} u
		WHERE NOT EXISTS (SELECT 1 FROM {identities} i WHERE i.{identities.user_id} = u.{users.id}) ORDER BY u.{users.id}`))
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	users, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (history.User, error) {
		var (
			u                history.User
			created, updated time.Time
		)
		err := row.Scan(&u.ID, &u.PrimaryEmail, &u.PrimaryEmailNormalized, &u.DisplayName, &u.Timezone, &u.IsAdmin, &created, &updated)
		u.CreatedAtMs, u.UpdatedAtMs = created.UnixMilli(), updated.UnixMilli()
		return u, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("people: %w", err)
	}
	return ids, users, nil
}

// explain adds what to check to the database errors that mean the
// database is not what the profile describes. An export reads a product's
// own database, so the fix is not to create tables but to point at the
// right database, or to use the profile that matches it.
func explain(err error, p *schema.Profile) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return err
	}
	switch pg.Code {
	case "42P01": // undefined_table
		return fmt.Errorf("%w: the database lacks the tables of profile %s: is --database-url the product's database? `recorder schema --profile %[2]s` prints the tables it expects", err, p.Name)
	case "42703": // undefined_column
		return fmt.Errorf("%w: the database's tables differ from profile %s: the product's schema may be newer or older than the profile; `recorder schema --profile %[2]s` prints what it expects", err, p.Name)
	}
	return err
}
