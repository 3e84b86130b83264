// Package schema describes the product databases that agentvcr exports from
// and loads into, one profile per product. A profile names the tables that
// export and loader touch, the event types that the product's conversation
// fork never copies, and the DDL of that subset, so a test database can be
// made from nothing.
//
// The one profile today is "junior", for getsentry/junior. Its tables are
// junior_users, junior_identities, junior_conversations and
// junior_conversation_events, with the columns, keys, foreign keys and
// indexes of Junior's public schema. The export and loader packages speak
// Junior's column names; a second product adds its own profile.
package schema

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
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
