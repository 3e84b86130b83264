package history

import (
	"encoding/json"
	"fmt"
)

// Version is the only recorded-history format version this package reads and writes.
const Version = 1

// Surface says where the recorded conversation was delivered.
type Surface string

// The surfaces of format version 1.
const (
	SurfaceSlack Surface = "slack"
	SurfaceWeb   Surface = "web"
)

// ParseSurface returns the surface named s, or an error for any other value.
func ParseSurface(s string) (Surface, error) {
	switch Surface(s) {
	case SurfaceSlack, SurfaceWeb:
		return Surface(s), nil
	}
	return "", fmt.Errorf("unknown surface %q (want %q or %q)", s, SurfaceSlack, SurfaceWeb)
}

// Event is one row of the conversation event log.
type Event struct {
	// Seq is the row's position in the conversation, unique per conversation.
	// Rows are ordered by it; gaps are allowed (a fork leaves holes).
	Seq int64
	// Type is the event type, such as "message" or "assistant_message".
	Type string
	// HistoryVersion is the model-history generation the row belongs to.
	HistoryVersion int64
	// SchemaVersion is 2 for rows whose payload.message is an encoded model message.
	SchemaVersion int64
	// IdempotencyKey is the product's dedupe key; nil when the row has none.
	IdempotencyKey *string
	// CreatedAtMs is the row's creation time in Unix milliseconds.
	CreatedAtMs int64
	// Payload is the event data as raw JSON bytes; always a JSON object.
	Payload json.RawMessage
	// ActorIdentityID is the identity of the human author, when the export
	// carried it (an agentvcr extension); nil otherwise.
	ActorIdentityID *string
}

// Header is everything in a recorded-history document except its events.
type Header struct {
	Version    int
	Surface    Surface
	Exporter   *Exporter
	Identities []Identity
}

// Exporter describes the export that produced a file. It is an agentvcr
// extension that Junior ignores.
type Exporter struct {
	Tool           string `json:"tool,omitempty"`
	Version        string `json:"version,omitempty"`
	Profile        string `json:"profile,omitempty"`
	ExportedAt     string `json:"exportedAt,omitempty"`
	ConversationID string `json:"conversationId,omitempty"`
	// Sanitizer is the sanitizer's stamp (key fingerprint, rules digest,
	// version); absent on a raw export.
	Sanitizer json.RawMessage `json:"sanitizer,omitempty"`
}

// Identity is one junior_identities row that the events reference, with the
// junior_users row it belongs to. Times are Unix milliseconds.
type Identity struct {
	ID                string          `json:"id"`
	Kind              string          `json:"kind"`
	Provider          string          `json:"provider"`
	ProviderTenantID  string          `json:"providerTenantId"`
	ProviderSubjectID string          `json:"providerSubjectId"`
	DisplayName       *string         `json:"displayName,omitempty"`
	Handle            *string         `json:"handle,omitempty"`
	Email             *string         `json:"email,omitempty"`
	EmailNormalized   *string         `json:"emailNormalized,omitempty"`
	EmailVerified     bool            `json:"emailVerified"`
	AvatarURL         *string         `json:"avatarUrl,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	CreatedAtMs       int64           `json:"createdAtMs"`
	UpdatedAtMs       int64           `json:"updatedAtMs"`
	User              *User           `json:"user,omitempty"`
}

// User is the junior_users row behind an identity.
type User struct {
	ID                     string  `json:"id"`
	PrimaryEmail           *string `json:"primaryEmail,omitempty"`
	PrimaryEmailNormalized *string `json:"primaryEmailNormalized,omitempty"`
	DisplayName            *string `json:"displayName,omitempty"`
	Timezone               *string `json:"timezone,omitempty"`
	IsAdmin                bool    `json:"isAdmin"`
	CreatedAtMs            int64   `json:"createdAtMs"`
	UpdatedAtMs            int64   `json:"updatedAtMs"`
}

// Recording is a whole recorded conversation held in memory. Use Reader and
// Writer instead when the conversation may be long.
type Recording struct {
	Header
	Events []Event
}
