// Package leakcheck is the sanitizer's leak check: it reads recorded
// history that package sanitize wrote and finds what must not be there,
// with code of its own. Package sanitize imports it and hands it every
// value it learned (Checker), and refuses to write a document in which it
// finds one; Check is the gate for CI over files already in git, with no
// key.
//
// It imports nothing of the rewrite, so a bug in how the rewrite finds a
// value cannot hide the same value from the check: the compiler keeps the
// two apart (package sanitize imports this one, so this one cannot import
// it). What the two share is data and a format: the word lists and tables
// of package words, the fakes' check characters of package fakemark,
// gitleaks' rules (internal/secrets) and libphonenumber.
package leakcheck
