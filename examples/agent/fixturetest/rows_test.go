package fixturetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/history"
)

// What Junior's recording has that the reference agent does not, which
// the comparison leaves out, each by name.
const (
	// skills: Junior lists its skills in the runtime context block
	// (<available-skills>); the agent has none.
	noSkills = "<available-skills>"
	// sandbox: Junior's <runtime> section names its sandbox's root; the
	// agent has no sandbox, and Junior leaves out a section it has
	// nothing for.
	noSandbox = "<runtime>"
	// thinking: Junior's model thinks; the scripted one does not, so an
	// assistant message's thinking blocks are left out.
	noThinking = "thinking"
	// narration: Junior's model wrote a line of text with its tool call;
	// the scripted model calls tools without text, so the text blocks of
	// an assistant message that calls a tool are left out.
	noNarration = "text"
)

// Volatile values: ids, digests, times and usage differ from run to run;
// keys are compared with their message ids and digests masked, payloads
// by their shapes (keys and kinds of values), texts where named.
var (
	messageID = regexp.MustCompile(`api-msg([:_])[0-9a-f]{24}`)
	digest    = regexp.MustCompile(`:update:[0-9a-f]{32}`)
)

// juniorRow is one row as the comparison sees it.
type juniorRow struct {
	typ        string
	schema, hv int64
	key        string // volatile parts masked
	payload    map[string]any
	message    map[string]any // a v2 row's decoded message
	raw        string         // the payload as stored
}

func (r juniorRow) text() string {
	content, _ := r.message["content"].([]any)
	var parts []string
	for _, c := range content {
		if b, _ := c.(map[string]any); b["type"] == "text" {
			parts = append(parts, b["text"].(string))
		}
	}
	return strings.Join(parts, "\n")
}

func newJuniorRow(t *testing.T, typ string, schema, hv int64, key *string, payload []byte) juniorRow {
	t.Helper()
	r := juniorRow{typ: typ, schema: schema, hv: hv, raw: string(payload)}
	if key != nil {
		r.key = digest.ReplaceAllString(messageID.ReplaceAllString(*key, "api-msg$1<id>"), ":update:<digest>")
	}
	if err := json.Unmarshal(payload, &r.payload); err != nil {
		t.Fatalf("%s row: %v", typ, err)
	}
	if s, ok := r.payload["message"].(string); ok {
		if err := json.Unmarshal([]byte(s), &r.message); err != nil {
			t.Fatalf("%s row: message: %v", typ, err)
		}
	}
	return r
}

// shape is v's structure: object keys (sorted) and their values'
// shapes, array elements' shapes, JSON in a string decoded, scalars by
// kind. A tool call's arguments are the tool's own and not compared.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if k == "arguments" {
				parts = append(parts, k)
				continue
			}
			parts = append(parts, k+":"+shape(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, shape(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		var inner map[string]any
		if strings.HasPrefix(x, "{") && json.Unmarshal([]byte(x), &inner) == nil {
			return shape(inner)
		}
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// leaveOut drops from a recorded assistant message the blocks the
// scripted model does not write: thinking, and text beside a tool call.
func leaveOut(r *juniorRow) {
	content, _ := r.message["content"].([]any)
	calls := slices.ContainsFunc(content, func(c any) bool { return c.(map[string]any)["type"] == "toolCall" })
	kept := slices.DeleteFunc(slices.Clone(content), func(c any) bool {
		typ := c.(map[string]any)["type"]
		return typ == noThinking || calls && typ == noNarration
	})
	if r.typ == "assistant_message" {
		r.message["content"] = kept
		r.payload["message"] = r.message
	}
}

// withoutSections drops the sections of a runtime context block (they
// are apart by blank lines) that open with one of the excluded tags,
// failing if a <runtime> section says more than the sandbox's root.
func withoutSections(t *testing.T, block string) string {
	t.Helper()
	var kept []string
	for _, s := range strings.Split(block, "\n\n") {
		switch {
		case strings.HasPrefix(s, noSkills):
		case strings.HasPrefix(s, noSandbox):
			for _, line := range strings.Split(s, "\n") {
				if strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "- sandbox.") {
					t.Fatalf("the recording's <runtime> says more than its sandbox: %q", line)
				}
			}
		default:
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, "\n\n")
}

// The agent's turns write the rows Junior's do, text included: the
// recording's three web messages, run as three live turns, write its
// rows in its order with its types, versions, key shapes and payload
// keys, the same instruction blocks, and the same runtime context block,
// once. Left out is what Junior has and the agent does not (skills, a
// sandbox, thinking, text beside a tool call); the recording's sanitized
// author stands for the live one. The stored text is JSON.stringify's: a
// search for a block's tag finds it, as it finds Junior's.
func TestTurnsWriteTheRowsJuniorWrites(t *testing.T) {
	rec, err := history.ReadFile("../../../history/testdata/launch-planning.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []juniorRow
	var inputs []string
	for _, e := range rec.Events {
		r := newJuniorRow(t, e.Type, e.SchemaVersion, e.HistoryVersion, e.IdempotencyKey, e.Payload)
		leaveOut(&r)
		want = append(want, r)
		if e.Type == "message" && r.payload["role"] == "user" {
			inputs = append(inputs, r.payload["text"].(string))
		}
	}

	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed(), routed())
	m.Respond(titler, fakeai.Text("Orbit launch"))
	// The recording's turns: a tool call then a reply, again, then a reply.
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("Orbit ships on March 12; Priya owns it.")),
		fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("Go/no-go: March 10.")),
		fakeai.Text("March 12, Priya, the billing migration."))
	if len(inputs) != 3 {
		t.Fatalf("the recording has %d inputs; this test runs 3", len(inputs))
	}
	conv := f.Run(fixture.WebMessage(inputs[0]))
	conv.Continue(fixture.WebMessage(inputs[1])).Continue(fixture.WebMessage(inputs[2]))

	// The rows as stored are what this test is about, and no route of the
	// agent's gives them: it reads the database (an offence the vet
	// ratchet lists on purpose).
	db := connect(t, f.DatabaseURL())
	q, err := db.Query(context.Background(), `SELECT type, schema_version, history_version, idempotency_key, payload::text
		FROM junior_conversation_events WHERE conversation_id = $1 ORDER BY seq`, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	var have []juniorRow
	for q.Next() {
		var typ, payload string
		var sv, hv int64
		var key *string
		if err := q.Scan(&typ, &sv, &hv, &key, &payload); err != nil {
			t.Fatal(err)
		}
		have = append(have, newJuniorRow(t, typ, sv, hv, key, []byte(payload)))
	}
	if err := q.Err(); err != nil {
		t.Fatal(err)
	}

	kinds := func(rows []juniorRow) string {
		var s []string
		for _, r := range rows {
			s = append(s, r.typ)
		}
		return strings.Join(s, " ")
	}
	if kinds(have) != kinds(want) {
		t.Fatalf("rows\n %s\nJunior's\n %s", kinds(have), kinds(want))
	}
	// The recording is sanitized: its author is the live one here.
	author := func(rows []juniorRow) map[string]any {
		return rows[0].payload["meta"].(map[string]any)["author"].(map[string]any)
	}
	var pairs []string
	for _, k := range []string{"userName", "userId", "email"} {
		pairs = append(pairs, author(want)[k].(string), author(have)[k].(string))
	}
	asLive := strings.NewReplacer(pairs...)

	contexts := 0
	for i := range want {
		w, h := want[i], have[i]
		if h.schema != w.schema || h.hv != w.hv || h.key != w.key {
			t.Errorf("row %d (%s): schema %d, history %d, key %q; Junior's %d, %d, %q", i, h.typ, h.schema, h.hv, h.key, w.schema, w.hv, w.key)
		}
		if hs, ws := shape(h.payload), shape(w.payload); hs != ws {
			t.Errorf("row %d (%s) payload:\n %s\nJunior's\n %s", i, h.typ, hs, ws)
		}
		if h.typ != "user_message" {
			continue
		}
		switch p, _ := w.payload["provenance"].(map[string]any); p["authority"] {
		case "context":
			contexts++
			if got, want := h.text(), asLive.Replace(withoutSections(t, w.text())); got != want {
				t.Errorf("row %d: the runtime context\n%s\nJunior's\n%s", i, got, want)
			}
		case "instruction":
			if got, want := h.text(), w.text(); got != want {
				t.Errorf("row %d: the instruction\n%s\nJunior's\n%s", i, got, want)
			}
		}
	}
	if contexts != 1 {
		t.Errorf("the recording has %d runtime contexts; Junior writes one", contexts)
	}

	// The stored text is written plainly: no \u003c-style escapes, and a
	// text search for a block's tag finds its rows.
	for i, r := range have {
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(r.raw, esc) {
				t.Errorf("row %d (%s) is stored with %s: %.200s", i, r.typ, esc, r.raw)
			}
		}
	}
	for tag, n := range map[string]int{"<current-instruction>": 3, "<runtime-turn-context>": 1} {
		var found int
		if err := db.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events
			WHERE conversation_id = $1 AND strpos(payload::text, $2) > 0`, conv.ID, tag).Scan(&found); err != nil {
			t.Fatal(err)
		}
		if found != n {
			t.Errorf("a search for %s finds %d rows; want %d", tag, found, n)
		}
	}
}

// The runtime context is in each model history once, as Junior writes
// it: a turn on a loaded recording adds none to the recording's, and a
// turn whose history a compaction replaced writes it again, after the
// summary.
func TestTheRuntimeContextIsInAHistoryOnce(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	small := f.Agent(fixture.AgentOptions{Limits: fixture.Limits{ContextWindowTokens: 500}})
	m := f.Model()
	summarizer := fakeai.Agent{Name: "summary", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Summarize the conversation") }}
	m.Respond(router, routed(), routed())
	m.Respond(summarizer, fakeai.Text("Orbit ships March 12; Priya owns it."))
	m.Respond(loop, fakeai.Text("Priya."), fakeai.Text("Priya, still."))
	recorded := fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json"))
	f.Run(fixture.WebMessage("Who owns Orbit?"), recorded)
	small.Run(fixture.WebMessage("Who owns Orbit?"), recorded)
	calls := m.Calls(loop)
	tests := []struct {
		name, first, then string // the context is between first and then
	}{
		{"on the recording", "", "Help me plan the Orbit launch"},           // the recording's own
		{"after a compaction", "<conversation-summary>", "Who owns Orbit?"}, // written again
	}
	for i, tt := range tests {
		p := calls[i].Prompt.Text()
		at := strings.Index(p, "<runtime-turn-context>")
		if n := strings.Count(p, "<runtime-turn-context>"); n != 1 || at < strings.Index(p, tt.first) || at > strings.Index(p, tt.then) {
			t.Errorf("%s: the prompt has %d runtime contexts, the first not between %q and %q:\n%s", tt.name, n, tt.first, tt.then, p)
		}
	}
}
