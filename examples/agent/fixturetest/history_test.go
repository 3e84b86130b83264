package fixturetest_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/history"
)

// volatile are the ids, times and model usage a built turn cannot know:
// Slack ts, message, turn, tool-call and response ids.
var volatile = regexp.MustCompile(`\d{10}\.\d{6}|api-msg[:_][0-9a-f]{24}|toolu_fake_\d+|call_built_\d+|msg_fake_\d+|gen_built_\d+|:update:[0-9a-f]{32}|turn_[0-9_]+`)

// rows reads a conversation's rows as a built turn can match them: types,
// versions, keys and payloads with the volatile values masked and usage
// and times dropped; turn_routed, which says how a live turn was routed,
// is left out. The runtime context row is compared, text and all.
func rows(t *testing.T, db, id string, through int) []string {
	t.Helper()
	r, err := connect(t, db).Query(context.Background(), `SELECT type, schema_version, coalesce(idempotency_key, ''), payload
		FROM junior_conversation_events WHERE conversation_id = $1 AND seq <= $2 ORDER BY seq`, id, through)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r.Next() {
		var typ, key string
		var sv int
		var payload map[string]any
		if err := r.Scan(&typ, &sv, &key, &payload); err != nil {
			t.Fatal(err)
		}
		if typ == "turn_routed" {
			continue
		}
		out = append(out, typ+" "+string(rune('0'+sv))+" "+volatile.ReplaceAllString(key, "<id>")+" "+canonical(payload))
	}
	return out
}

func canonical(v any) string {
	switch x := v.(type) {
	case map[string]any:
		var keys []string
		for k := range x {
			switch k {
			case "usage", "timestamp", "createdAtMs", "costUsd":
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+canonical(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, canonical(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		var inner any
		if strings.HasPrefix(x, "{") && json.Unmarshal([]byte(x), &inner) == nil {
			return canonical(inner)
		}
		return volatile.ReplaceAllString(x, "<id>")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// History built from items writes the rows a live turn writes: the same
// conversation run live, then built, is equal without ids, times, seq
// numbers and model usage.
func TestBuiltHistoryHasTheRowsOfALiveTurn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Thread question"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("It is about the launch.")),
		fakeai.Text("You're welcome."))
	live := f.Run(fixture.SlackMention("what is in this thread?"))
	result := live.ToolCalls[0].Output

	built := f.Run(fixture.SlackThreadMessage("thanks"), fixture.History(fixture.Built(
		history.SlackMention("what is in this thread?"),
		history.Reply("It is about the launch.", history.ToolUse{Name: "slackThreadRead", Input: map[string]any{}, Result: result}))))
	if !slices.Equal(built.ReplyTexts(), []string{"You're welcome."}) {
		t.Fatalf("the turn after built history: %+v", built)
	}
	want := rows(t, f.DatabaseURL(), live.ID, 1<<30)
	have := rows(t, f.DatabaseURL(), built.ID, len(want)) // the built rows (one turn_routed among them), before the call's own
	if len(have) < len(want) {
		t.Fatalf("%d built rows; the live turn wrote %d", len(have), len(want))
	}
	if testing.Verbose() {
		for _, r := range want {
			t.Log(r[:min(len(r), 160)])
		}
	}
	for i := range want {
		if have[i] != want[i] {
			t.Errorf("row %d:\n built %s\n live  %s", i, have[i], want[i])
		}
	}
}

// A fork at a built reply works, as at a live one.
func TestAForkAtABuiltReply(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(loop, fakeai.Text("The billing migration."), fakeai.Text("Priya."))
	planned := history.Reply("Orbit ships on March 12; Priya owns it.")
	conv := f.Run(fixture.WebMessage("And the main risk?"), fixture.History(fixture.Built(
		history.WebMessage("Plan the Orbit launch: March 12, owner Priya."), planned)))
	// The very item the history was built with.
	fork := conv.Fork(planned)
	next := fork.Continue(fixture.WebMessage("Who owns it?"))
	if !slices.Equal(next.ReplyTexts(), []string{"Priya."}) {
		t.Fatalf("the fork's call: %+v", next)
	}
	if p := m.Calls(loop)[1].Prompt.Text(); !strings.Contains(p, "Orbit ships on March 12") || strings.Contains(p, "And the main risk?") {
		t.Fatalf("the fork's prompt: %s", p)
	}
}

// Several history items are one conversation, in order: a recording,
// then built turns after it. Only the turn under test calls the model.
func TestHistoryOfARecordingAndBuiltTurns(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("Priya, and the date is March 12."))
	conv := f.Run(fixture.WebMessage("Who owns it, and when?"), fixture.History(
		fixture.Recorded("../../../history/testdata/launch-planning.json"),
		fixture.Built(history.WebMessage("Move the date to March 12."), history.Reply("Done: March 12.")),
		fixture.Built(history.WebMessage("Keep the owner."), history.Reply("Priya stays the owner."))))
	if !slices.Equal(conv.ReplyTexts(), []string{"Priya, and the date is March 12."}) || len(conv.Turns) != 1 {
		t.Fatalf("the call: %+v", conv)
	}
	if calls := m.Calls(loop); len(calls) != 1 {
		t.Fatalf("the model was called %d times; the history must call it never", len(calls))
	}
	p := m.Calls(loop)[0].Prompt.Text()
	recorded := strings.Index(p, "Orbit")
	moved, kept := strings.Index(p, "Done: March 12."), strings.Index(p, "Priya stays the owner.")
	if recorded < 0 || moved < recorded || kept < moved {
		t.Fatalf("the prompt lacks the recording, then the built turns, in order: %s", p)
	}
	if !strings.Contains(conv.Earlier, "Done: March 12.") || strings.Contains(conv.Transcript, "Done: March 12.") {
		t.Fatalf("the built turns are earlier conversation, not the call's: earlier %q transcript %q", conv.Earlier, conv.Transcript)
	}
}

// History on Continue adds built turns after the conversation's own,
// as if they had happened between the calls; a fork at one works.
func TestHistoryOnContinue(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed(), routed())
	m.Respond(titler, fakeai.Text("Launch"))
	m.Respond(loop, fakeai.Text("The launch is on March 12."), fakeai.Text("Priya owns it."), fakeai.Text("March 12."))
	conv := f.Run(fixture.SlackMention("when is the launch?"))
	noted := history.Reply("Noted: Priya owns it now.")
	next := conv.Continue(fixture.SlackThreadMessage("and who owns it?"), fixture.History(fixture.Built(
		history.SlackThreadMessage("note: Priya took over from Sam"), noted)))
	if !slices.Equal(next.ReplyTexts(), []string{"Priya owns it."}) || len(next.Turns) != 1 || len(next.ToolCalls) != 0 {
		t.Fatalf("the call after history on Continue: %+v", next)
	}
	p := m.Calls(loop)[1].Prompt.Text()
	if first, built, asked := strings.Index(p, "The launch is on March 12."), strings.Index(p, "Noted: Priya owns it now."),
		strings.Index(p, "and who owns it?"); first < 0 || built < first || asked < built {
		t.Fatalf("the prompt lacks the first turn, the built one and the question, in order: %s", p)
	}
	// The built turn is in the thread the agent reads.
	var texts []string
	thread := conv.ID[strings.LastIndex(conv.ID, ":")+1:]
	for _, msg := range f.Slack().Messages(fixture.Channel) {
		if msg.ThreadTS == thread {
			texts = append(texts, msg.Text)
		}
	}
	if !slices.Contains(texts, "note: Priya took over from Sam") || !slices.Contains(texts, "Noted: Priya owns it now.") {
		t.Fatalf("the Slack thread lacks the built turn: %q", texts)
	}
	fork := next.Fork(noted)
	if got := fork.Continue(fixture.WebMessage("when again?")); !slices.Equal(got.ReplyTexts(), []string{"March 12."}) {
		t.Fatalf("the fork at a reply built on Continue: %+v", got)
	}
	if p := m.Calls(loop)[2].Prompt.Text(); !strings.Contains(p, "Noted: Priya owns it now.") || strings.Contains(p, "and who owns it?") {
		t.Fatalf("the fork's prompt: %s", p)
	}
}

// History on Continue goes between turns: on a turn that waits for an
// authorization it fails, saying so, and writes nothing.
func TestHistoryOnContinueRefusesAnOpenTurn(t *testing.T) {
	rec := &fatalTB{TB: t}
	f := fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Billing issues"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})))
	conv := f.Run(fixture.WebMessage("Which issue has the billing rollback plan?"))
	var before int
	db := connect(t, f.DatabaseURL())
	db.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1`, conv.ID).Scan(&before)
	msg := rec.fatal(t, 30*time.Second, "Continue with history on an open turn", func() {
		conv.Continue(fixture.WebMessage("and the owner?"), fixture.History(fixture.Built(history.WebMessage("a"), history.Reply("b"))))
	})
	if !strings.Contains(msg, "has not ended") || !strings.Contains(msg, "CompleteAuth") {
		t.Fatalf("the failure %q does not say the turn is open", msg)
	}
	var after int
	db.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1`, conv.ID).Scan(&after)
	if after != before {
		t.Fatalf("%d rows after the refusal; %d before", after, before)
	}
}

// Built Slack history is one thread in the rows and in the mock: the
// conversation is the first message's ts, and each message is in the
// mock at the ts its row holds.
func TestBuiltSlackHistoryKeepsItsTS(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("March 12."))
	conv := f.Run(fixture.SlackThreadMessage("when again?"), fixture.History(fixture.Built(
		history.SlackMention("when is the launch?"), history.Reply("The launch is on March 12."))))
	rows, err := connect(t, f.DatabaseURL()).Query(context.Background(), `SELECT payload->>'messageId', payload->'meta'->>'slackTs', payload->>'text'
		FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'message' ORDER BY seq LIMIT 2`, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{} // text: slackTs
	var first string
	for rows.Next() {
		var id, ts, text string
		if err := rows.Scan(&id, &ts, &text); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = id
		}
		stored[text] = ts
	}
	if !strings.HasSuffix(conv.ID, ":"+first) {
		t.Fatalf("conversation %s; the first message is %s", conv.ID, first)
	}
	mock := map[string]string{}
	for _, msg := range f.Slack().Messages(fixture.Channel) {
		mock[msg.Text] = msg.TS
	}
	for text, ts := range stored {
		if mock[text] != ts {
			t.Errorf("%q is at ts %s in the rows and %s in the mock", text, ts, mock[text])
		}
	}
}
