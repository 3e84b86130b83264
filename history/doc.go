// Package history reads, validates and writes recorded conversation history:
// the event rows of one conversation, as getsentry/junior stores them in
// junior_conversation_events, in the RecordedConversation JSON format
// (version 1) that Junior's own eval fixture reads and writes.
//
// A file moves both ways between Junior and agentvcr. Readers ignore unknown
// top-level keys; agentvcr adds three optional ones: a row field
// actorIdentityId, a top-level identities array (the identity rows that the
// events reference) and a top-level exporter object (tool, version, profile,
// export time, source conversation id).
//
// Rows are ordered by seq, never by time: createdAtMs is not monotonic. Each
// row's payload is kept as the raw JSON bytes it was read or exported with;
// schema-version-2 payloads hold the model message as a JSON document inside
// the string payload.message, and that string is never re-encoded.
//
// Reader and Writer stream one row at a time, so memory stays flat however
// long the conversation. Errors name the file, the row (its index in events
// and its seq) and the field, as *FormatError and *RowError.
//
// Build writes a conversation from builder items (SlackMention,
// SlackThreadMessage, WebMessage, Reply) as the rows real turns write, for
// a test that starts from history without calling a model.
//
// CutAtReply computes the rows that Junior's conversation fork copies when it
// forks at a delivered reply, with the product's refusals as typed errors.
package history
