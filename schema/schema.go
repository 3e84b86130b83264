// Package schema describes the product databases that agentvcr exports from
// and loads into, one profile per product. A profile names the tables that
// export and loader touch, the event types that the product's conversation
// fork never copies, and the DDL of that subset, so a test database can be
// made from nothing.
//
// The one profile today is "junior", for getsentry/junior. Its tables are
// junior_users, junior_identities, junior_conversations and
// junior_conversation_events, with the columns, keys, foreign keys and
// indexes of Junior's public schema. The export and loader packages write
// their SQL in Junior's names, as placeholders (Profile.SQL) that a
// profile maps to its product's tables and columns; a second product adds
// its own profile.
package schema

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Profile is one product's storage layout.
type Profile struct {
	// Name identifies the profile on the command line and in exports.
	Name string
	// Tables names the product's tables.
	Tables Tables
	// Columns maps a column, as Junior names it ("events.seq",
	// "identities.provider_subject_id": see LogicalColumns), to the
	// product's name for it. A column not listed keeps Junior's name.
	Columns map[string]string
	// UncopiedTypes are the event types the product's fork does not copy;
	// export drops them and loader skips them.
	UncopiedTypes []string
	// DDL creates the tables and their indexes; running it twice is a no-op.
	DDL string
}

// Tables names the tables of a profile.
type Tables struct {
	Users         string
	Identities    string
	Conversations string
	Events        string
}

// DefaultProfile is the name of the profile used when none is given.
const DefaultProfile = "junior"

//go:embed junior.sql
var juniorDDL string

// ErrUnknownProfile is returned by Lookup for a name it does not know.
var ErrUnknownProfile = errors.New("unknown schema profile")

// Lookup returns the profile with the given name, or DefaultProfile for "".
func Lookup(name string) (*Profile, error) {
	switch name {
	case "", "junior":
		return &Profile{
			Name: "junior",
			Tables: Tables{
				Users:         "junior_users",
				Identities:    "junior_identities",
				Conversations: "junior_conversations",
				Events:        "junior_conversation_events",
			},
			// Junior's conversation fork never copies credentials,
			// approvals, provider links and plugin state.
			UncopiedTypes: []string{
				"authorization_completed",
				"authorization_requested",
				"guardian_action_reviewed",
				"mcp_provider_connected",
				"mcp_provider_connected_unowned",
				"structured_event",
				"unknown",
			},
			DDL: juniorDDL,
		}, nil
	}
	return nil, fmt.Errorf("%w %q: known profiles are %s", ErrUnknownProfile, name, strings.Join(Names(), ", "))
}

// LogicalColumns returns the columns export and loader read and write in
// a table ("events", "conversations", "identities" or "users"), as Junior
// names them: with the table, the keys of Profile.Columns.
func LogicalColumns(table string) []string { return slices.Clone(logical[table]) }

var logical = map[string][]string{
	"events": {"conversation_id", "seq", "type", "history_version", "schema_version", "idempotency_key",
		"created_at", "payload", "actor_identity_id"},
	"conversations": {"conversation_id", "schema_version", "source", "source_json", "destination_json",
		"actor_identity_id", "creator_identity_id", "credential_subject_identity_id",
		"created_at", "last_activity_at", "updated_at", "execution_status", "duration_ms", "execution_duration_ms"},
	"identities": {"id", "kind", "provider", "provider_tenant_id", "provider_subject_id", "display_name", "handle",
		"email", "email_normalized", "email_verified", "avatar_url", "metadata_json", "created_at", "updated_at", "user_id"},
	"users": {"id", "primary_email", "primary_email_normalized", "display_name", "timezone", "is_admin",
		"created_at", "updated_at"},
}

// SQL expands the placeholders of a query written in Junior's names:
// {events} (and {conversations}, {identities}, {users}) becomes the
// profile's table, {events.seq} its column, each quoted as an identifier.
// A placeholder that names no table or column LogicalColumns lists is a
// bug in the query, and SQL panics.
func (p *Profile) SQL(query string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(query, '{')
		if open < 0 {
			b.WriteString(query)
			return b.String()
		}
		end := strings.IndexByte(query[open:], '}')
		if end < 0 {
			panic("schema: unclosed placeholder in " + query)
		}
		b.WriteString(query[:open])
		b.WriteString(pgx.Identifier{p.name(query[open+1 : open+end])}.Sanitize())
		query = query[open+end+1:]
	}
}

// name resolves one placeholder: a table, or table.column.
func (p *Profile) name(placeholder string) string {
	if _, _, isColumn := strings.Cut(placeholder, "."); isColumn {
		return p.Column(placeholder)
	}
	switch placeholder {
	case "events":
		return p.Tables.Events
	case "conversations":
		return p.Tables.Conversations
	case "identities":
		return p.Tables.Identities
	case "users":
		return p.Tables.Users
	}
	panic("schema: unknown placeholder {" + placeholder + "}")
}

// Column returns the product's name for a column given as Junior names it,
// "table.column" ("events.seq"). A column LogicalColumns does not list is
// a bug in the caller, and Column panics.
func (p *Profile) Column(column string) string {
	table, name, _ := strings.Cut(column, ".")
	if !slices.Contains(logical[table], name) {
		panic("schema: unknown column " + column)
	}
	if product, ok := p.Columns[column]; ok {
		return product
	}
	return name
}

// Check reports a profile whose Columns name a column export and loader
// do not use, such as a misspelt one, which would otherwise be ignored.
func (p *Profile) Check() error {
	for key := range p.Columns {
		table, column, _ := strings.Cut(key, ".")
		if !slices.Contains(logical[table], column) {
			return fmt.Errorf("schema profile %s: Columns[%q]: not a column export and loader use (see schema.LogicalColumns)", p.Name, key)
		}
	}
	return nil
}

// Names returns the names of the known profiles, sorted.
func Names() []string {
	names := []string{"junior"}
	sort.Strings(names)
	return names
}

// Uncopied reports whether the profile's fork skips rows of eventType.
func (p *Profile) Uncopied(eventType string) bool {
	for _, t := range p.UncopiedTypes {
		if t == eventType {
			return true
		}
	}
	return false
}

// Beginner starts transactions: *pgx.Conn, pgxpool.Pool and pgx.Tx are all
// Beginners.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Apply creates the profile's tables and indexes where they are missing, in
// one transaction. It holds a transaction-scoped advisory lock, so
// concurrent Apply calls on one database do not race.
func (p *Profile) Apply(ctx context.Context, db Beginner) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("apply schema %s: %w", p.Name, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "agentvcr schema "+p.Name); err != nil {
		return fmt.Errorf("apply schema %s: lock: %w", p.Name, err)
	}
	if _, err := tx.Exec(ctx, p.DDL); err != nil {
		return fmt.Errorf("apply schema %s: %w", p.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("apply schema %s: %w", p.Name, err)
	}
	return nil
}
