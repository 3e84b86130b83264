package fakeai

import (
	"strings"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// Prompt is one model request as the fake read it, the same in every
// dialect. Package proxy/wire reads it (wire.ParsePrompt), for the fake
// and for the proxy's progress events alike, so that the two never read
// a request differently.
type Prompt = wire.Prompt

// Message is one message of a prompt, its text parts joined.
type Message = wire.Message

// Tool is a tool the request offers.
type Tool = wire.Tool

// ToolResult is what an agent's tool returned, as the request carries it.
type ToolResult = wire.ToolResult

// opening is the beginning of a prompt, for messages.
func opening(p *Prompt) string {
	s := p.LastUser()
	if s == "" {
		s = p.System
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}
