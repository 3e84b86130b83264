// Package transcript renders what an agent did as one self-contained HTML
// page a person opens: who said what, each tool call with its arguments
// and result, each turn's state, and the judges' verdicts. The fixture
// writes one per test; recorder view renders a recorded-history file the
// same way. Every text is escaped: a page never runs what an agent or a
// person wrote.
package transcript
