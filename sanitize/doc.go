// Package sanitize removes people, workspaces and secrets from recorded
// history (package history) so that real conversations can be committed to
// git and read by anyone. It refuses to write rather than leak: after
// rewriting a document, a leak check that shares no matching code with the
// rewrite reads the output again, and if it finds an original value it
// learned, a secret, a personal value a detector knows, or a nested
// document that no longer parses, Sanitize returns a *LeakError and no
// output.
//
// The rewrite is decode first. Every string of a document is decoded
// completely, a string that is itself a JSON document is walked as one at
// any depth, and values are looked for in decoded text and in its
// HTML-entity- and percent-decoded forms. A replacement is written back
// escaped the way its string was (Go's \u003c, Python's \u00e9, \/), over
// whole characters, so untouched bytes stay identical and nested documents
// still parse.
//
// Values come from rules (gjson paths per event type and per identity
// field; DefaultRules for the junior profile), from Options.People (every
// person of a database, see People) and Options.Names, and from detectors:
// gitleaks' rule set for secrets (internal/secrets), libphonenumber for
// phones, mod 97 for IBANs, Luhn for cards, and detectors of emails, Slack
// markup, ids and workspaces, and IP addresses. Learned names match in any
// letter case, normalization and script, but for one-word names that are
// English words, which match only as written.
//
// Replacements are keyed and deterministic: each fake derives from
// HMAC-SHA256(key, kind || value), so the same key gives the same fake in
// every file and every run. Fakes keep the format of what they replace,
// and those a detector could take for an original carry a mark: Slack ids
// a check character, phones, IBANs and cards a failing check, IPs the
// documentation networks, emails example.com.
//
// Names are learned from free text too, before anything is written: the
// name every email address's local part spells (jo.kemp@corp.io), and
// the names a deterministic detector finds with word lists of given names
// and surnames (see names.go); Options.NoDetectNames turns the detector
// off and Rules.NotNames keeps phrases it would take for names. So are
// values only their context tells of (a password after curl -u, a date
// after "DOB"), and base64 that decodes to text is rewritten in place.
//
// Known limit: a name of words in no name list, with no word such as
// "ask" or "cc" before it, in no known field, no people file and no names
// list, is not found.
package sanitize
