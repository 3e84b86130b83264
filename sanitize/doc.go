// Package sanitize removes people, workspaces and secrets from recorded
// history (package history) so that real conversations can be committed to
// git and read by anyone. It refuses to write rather than leak: after
// rewriting a document it checks its own output for every original value it
// learned and every secret shape, and returns a *LeakError, and no output,
// if anything survived.
//
// Replacements are keyed and deterministic: each fake derives from
// HMAC-SHA256(key, kind || value), so the same key gives the same fake in
// every file and every run, and a fixture set stays consistent. Fakes keep
// the format of what they replace: Slack ids keep their type prefix and
// length, emails become addresses on example.com, names become coherent
// first and last names (each part mapped on its own, so "Ada" in free text
// and "Ada Quill" in a field agree), dashboard and conversation ids keep
// their shape, secrets become bracketed placeholders that no scanner takes
// for a token.
//
// The sanitizer works structure first, then text. Rules (gjson paths per
// event type and per identity field; DefaultRules for the junior profile)
// name the known personal fields, and the sanitizer learns each original
// value there. Then one pass over every string and object key, including
// JSON documents nested in strings at any depth and XML-escaped text,
// replaces every learned value and runs detectors for emails, Slack markup
// and ids, workspace URLs, phone numbers, IP addresses and secrets.
// Replacements are spliced into the raw bytes: everything else, escapes
// included, stays byte for byte, so a re-sanitized fixture diffs only where
// a value changed.
//
// Known limit: a name that appears only in free text, in no known field and
// in no names dictionary (Options.Names), is not found.
package sanitize
