// Package store keeps the reference agent's conversations in PostgreSQL,
// in Junior's tables: the conversation row and its event log, appended
// under a per-conversation lock with a dense seq and idempotency keys, as
// Junior's history store does, and forks copied in SQL as Junior's
// copyForkEvents does. Automations and credentials, which Junior keeps
// elsewhere, have small tables of their own.
package store
