package proxy

import "net/http"

// Mock answers the requests of rules in mode mock in process, the way
// the Slack mock (package proxy/slack) does. Beyond serving, the proxy
// asks of it only what a test scope needs to know, so that it imports no
// mock and a caller may give it its own.
type Mock interface {
	http.Handler
	// Unknown lists, oldest first, the calls the mock did not know (for
	// Slack, the methods it answered unknown_method): a test scope in
	// which the list grew counts as failed (ErrUnknownSlackMethod).
	Unknown() []string
}

// Fake answers the model requests of rules in mode fake in process, the
// way the scripted model (package fakeai) does. Beyond serving, the proxy
// asks of it only what a test scope needs to know.
type Fake interface {
	http.Handler
	// Failures lists, oldest first, what the fake got and no script
	// answers: a test scope in which the list grew counts as failed
	// (ErrUnscripted).
	Failures() []string
	// DropUnused forgets the scripted answers no request asked for, and
	// lists them: a test scope that ends with any counts as failed
	// (ErrUnusedScript), and they must not answer the next one.
	DropUnused() []string
}
