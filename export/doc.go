// Package export streams conversations out of a product's PostgreSQL
// database as recorded history (package history), for tests to load again
// and for the sanitizer to clean before anything goes into git.
//
// Export only reads: each conversation is read in one read-only,
// repeatable-read transaction, so the header and every row come from one
// snapshot. Rows stream from the server to the writer one at a time, so
// memory stays flat however long the conversation. Rows of the types the
// product's fork never copies (credentials, approvals, plugin state) are
// dropped. With WithIdentities, the identity rows that the conversation and
// its events reference go into the file too, so the sanitizer learns every
// name and email to hunt for; the export is then personal data and must not
// be written anywhere but the user's own disk before it is sanitized.
package export
