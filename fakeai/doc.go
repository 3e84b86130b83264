// Package fakeai is a scripted model provider for wiring tests: tests in
// which the model's answers are fixed while the agent's own tools, routes
// and database run for real.
//
// A Model is an http.Handler that answers, by request path as the proxy's
// dialect detection reads it, Anthropic Messages (/v1/messages), OpenAI
// Chat Completions (/chat/completions) and Responses (/responses), and the
// AI SDK gateway protocol (/language-model), as JSON or streamed, in the
// shapes the providers send: ids, usage, finish reasons, text in several
// deltas and tool arguments in several fragments.
//
// Answers are scripted per Agent, a named matcher over the request, one
// Response per prompt: Text, Output (structured output, checked against
// the request's JSON schema), ToolCalls(...).Then(next), Truncated and
// ProviderError. Calls returns what each agent was asked and answered,
// with what the agent's tools returned. A prompt no script answers gets a
// provider error and fails the test, then and again at cleanup, as does a
// script left unused.
package fakeai
