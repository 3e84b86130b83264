// Package fixtureservice serves the Go fixture (package fixture) over
// HTTP, for tests written in other languages: a TypeScript test in
// vitest creates a fixture for its app, runs, continues and forks
// conversations, loads history, scripts the model and answers progress
// through this API, and the one Go implementation does the work. It is
// what `recorder fixture serve` runs; the npm package's fixture() is its
// client.
//
// Every call needs "Authorization: Bearer <token>" and comes from
// loopback. A fixture belongs to the client that made it until it is
// deleted; each has its own database, proxy, Slack mock, scripted model
// and app, so fixtures of many test workers on one service never meet.
// The routes, with their bodies and answers, are the OpenAPI 3.1
// document served at GET /v1/openapi.json (fixtureservice/openapi.json).
//
// A call (run, continue, fork) answers with a stream of JSON lines: the
// call's id, then its progress events when the client asked for them
// (the agent waits at each until the client acknowledges it, and may
// send an input meanwhile), then its result or its error. A fixture's
// failures that do not end a call (an unscripted prompt, a script never
// used) come with the next answer and with the fixture's deletion, as
// a Go test would have them reported by t.Errorf.
package fixtureservice
