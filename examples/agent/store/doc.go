// Package store keeps the reference agent's conversations in PostgreSQL,
// in Junior's tables: the conversation row and its event log, appended
// under a per-conversation lock with a dense seq and idempotency keys, as
// Junior's history store does, and forks copied in SQL as Junior's
// copyForkEvents does. Automations and credentials, which Junior keeps
// elsewhere, have small tables of their own. schema.sql makes them all,
// and is the one place that names the tables and their columns: the
// agent knows its own storage, as a product does.
package store
