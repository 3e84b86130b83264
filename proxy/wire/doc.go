// Package wire reads the model dialects an agent speaks as their bytes go
// by, so the proxy can say what a turn is doing while it does it.
//
// Four dialects are known, recognized by the request path on any origin
// (so self-hosted OpenAI-compatible servers work too): Anthropic Messages
// (/v1/messages), OpenAI Chat Completions (/chat/completions), OpenAI
// Responses (/responses) and the AI SDK gateway protocol
// (/language-model, as under /v3/ai). ParsePrompt reads a request whole,
// once for every reader: the scripted model (package fakeai) answers
// from it, and ParseRequest is the part of it progress events report.
// SlackParams reads a Slack Web API call the same way for the Slack mock
// and the proxy's reply events. A Parser is fed the response body in whatever pieces it
// arrives and emits one normalized Event per text delta, complete tool
// call, finish (with reason and usage) and provider error, whether the
// response streams (SSE) or not. A Parser never fails the stream it
// reads: what it cannot understand it skips, and a body that ends before
// the finish yields an error event that says so.
package wire
