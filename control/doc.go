// Package control is the control API of agentvcr's proxy and its two
// mocks: an HTTP handler (New) through which a test in any language
// opens and ends test scopes, follows progress events and releases
// holds, injects faults, seeds and reads the Slack mock (package
// proxy/slack) and scripts the model (package fakeai), on loopback and
// with a bearer token. It composes them so that the proxy imports
// neither mock: the proxy serves the mocks as the http.Handlers its
// caller gives it, and this package drives all three.
//
// Its routes are the OpenAPI 3.1 document openapi.json, served at
// GET /v1/openapi.json.
package control
