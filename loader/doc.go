// Package loader writes recorded history into a product's PostgreSQL
// database the way the product's own conversation fork copies rows, so that
// a test starts from a real conversation and only the turn under test calls
// the model.
//
// A load is one transaction: the conversation row, the identity rows
// (upserted by provider, tenant and subject), then the event rows through
// COPY, with seq, historyVersion, schemaVersion, idempotencyKey, type,
// payload, createdAt and actorIdentityId unchanged. Rows of the types the
// fork never copies are skipped. Any failure rolls the whole load back and
// names the row; nothing is ever half-written. Loading the same history to
// the same conversation id again writes nothing and returns
// ErrAlreadyLoaded.
package loader
