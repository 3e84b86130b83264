// Package llm makes the reference agent's model calls on the gateway, in
// the protocols Junior uses: the turn router on the AI SDK protocol
// (/v3/ai/language-model, structured output), the agent loop, titles and
// summaries on Anthropic Messages (/v1/messages, streamed).
package llm
