package bench

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/keyref"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// smallBody is a 57-byte model request.
const smallBody = `{"model":"claude-haiku-4-5","max_tokens":8,"stream":true}`

// modelRequest is a 50 KB Anthropic messages request as an agent sends
// it late in a long Slack thread: a system prompt, tool definitions, and
// turns of text, tool calls and tool results (JSON in a string, with
// escapes, ids and times), some of them not ASCII.
func modelRequest() string {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":8192,"stream":true,"temperature":0.2,`)
	b.WriteString(`"system":[{"type":"text","text":"You are Junior, an assistant in the team's Slack workspace.\n\n## Rules\n- Answer in the thread you were asked in.\n- Cite the pages you read, as <url|title>.\n- Never post secrets; say \"redacted\" instead.\n\nToday is 2026-11-29T09:30:00Z.","cache_control":{"type":"ephemeral"}}],`)
	b.WriteString(`"tools":[`)
	for i, tool := range []struct{ name, what string }{
		{"webFetch", "Fetch a web page and return its text, without markup."},
		{"searchIssues", "Search the issue tracker; returns up to 20 issues, newest first."},
		{"slackHistory", "Read the messages of a Slack thread, oldest first."},
	} {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":%q,"description":%q,"input_schema":{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}}`, tool.name, tool.what)
	}
	b.WriteString(`],"messages":[`)
	asks := []string{ // JSON string text
		"Can you check why the nightly deploy of billing-api failed? It was fine yesterday.",
		"What changed in the checkout flow since last week's release? Keep it short, please.",
		"Résumé of the incident so far — who is on call, and what's still open?",
		`Is there an issue about the flaky \"payments: refund\" test? It failed again 😕`,
	}
	for i := 0; b.Len() < 50<<10; i++ {
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"text","text":"<@U0%dABCD> %s"}]},`, 1000+i, asks[i%len(asks)])
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"I'll look at the recent runs first."},{"type":"tool_use","id":"toolu_01%sQx%04d","name":"searchIssues","input":{"query":"deploy failure billing-api","limit":5}}]},`, "Hb8kLm2Vt", i)
		fmt.Fprintf(&b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01%sQx%04d","content":"{\"issues\":[{\"id\":\"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f%04d\",\"title\":\"Nightly deploy fails: migration 0042 times out\",\"state\":\"open\",\"updated\":\"2026-11-2%dT0%d:12:44Z\",\"url\":\"https://tracker.example.com/issues/%d\"}],\"total\":1}"}]},`, "Hb8kLm2Vt", i, i, i%9, i%10, 4000+i)
		fmt.Fprintf(&b, `{"role":"assistant","content":[{"type":"text","text":"The deploy fails in migration 0042, which times out on the ledger table (issue #%d, updated today). The last good run was at 1790000000%03d.\n\n*Open:* a fix for the lock, and a re-run."}]},`, 4000+i, i%1000)
	}
	b.WriteString(`{"role":"user","content":[{"type":"text","text":"Thanks! Post the summary in #billing."}]}],"metadata":{"user_id":"b7e2d9c4-1a5f-4e8b-9c3d-2f6a8e1b0c7d"}}`)
	return b.String()
}

// BenchmarkKey measures the canonical key of a request, as the proxy
// takes it for each request it sees (the matcher of a rule with a key
// header and the default values), with a 57-byte body, with modelRequest
// (50KB), and with the 50 KB body of BenchmarkReplayLookup (50KB-replay:
// one short turn again and again, no ids or times), beside the key as it
// was first computed (reference: decode the body, encode each field
// again, run each value's expression over every part). Target for a
// 50 KB body: 100 µs and 50 allocations.
func BenchmarkKey(b *testing.B) {
	m := &cassette.Matcher{KeyHeaders: []string{"anthropic-version"}, Values: cassette.DefaultValues()}
	impls := []struct {
		name string
		key  func(*cassette.Matcher, *cassette.Request) string
	}{
		{"reference", func(m *cassette.Matcher, r *cassette.Request) string { k, _ := keyref.Key(m, r); return k }},
		{"streaming", (*cassette.Matcher).Key},
	}
	bodies := []struct{ name, body string }{{"57B", smallBody}, {"50KB", modelRequest()}, {"50KB-replay", chatBody(1)}}
	for _, body := range bodies {
		r := cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Body: body.body,
			Headers: http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"redacted"}}}
		wantKey, wantParts := keyref.Key(m, &r)
		if key, parts := m.Key(&r), m.Parts(&r); key != wantKey || !slices.Equal(parts, wantParts) {
			b.Fatalf("%s: Key differs from the reference", body.name)
		}
	}
	for _, impl := range impls {
		for _, body := range bodies {
			b.Run(impl.name+"/"+body.name, func(b *testing.B) {
				r := cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages", Body: body.body,
					Headers: http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"redacted"}}}
				b.ReportAllocs()
				b.SetBytes(int64(len(body.body)))
				for b.Loop() {
					impl.key(m, &r)
				}
			})
		}
	}
}
