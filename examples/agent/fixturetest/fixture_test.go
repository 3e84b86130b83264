package fixturetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/slack"
	"github.com/jackc/pgx/v5"
)

// exampleAgent is examples/agent as the fixture starts it, in-process,
// configured by the environment a process would get, with extra added.
func exampleAgent(extra map[string]string) fixture.App { return agenttest.App(extra) }

// connect opens a connection to the agent's database, closed when the
// test ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

var (
	router = fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	titler = fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	loop   = fakeai.Agent{Name: "agent", Purpose: "agent"}
)

func routed() fakeai.Response {
	return fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"})
}

func TestRunAndContinueAWebConversation(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Deploy question"))
	m.Respond(loop, fakeai.Text("Deploy 42 went out at 14:02."), fakeai.Text("Nothing since."))
	conv := f.Run(fixture.WebMessage("Did deploy 42 go out?"))
	if !slices.Equal(conv.ReplyTexts(), []string{"Deploy 42 went out at 14:02."}) || len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" {
		t.Fatalf("first call: %+v", conv)
	}
	next := conv.Continue(fixture.WebMessage("Anything since?"))
	if next.ID != conv.ID || !slices.Equal(next.ReplyTexts(), []string{"Nothing since."}) || len(next.Turns) != 1 {
		t.Fatalf("the second call's results are its own: %+v", next)
	}
	// The model saw the first turn when it answered the second.
	calls := m.Calls(loop)
	if !strings.Contains(calls[1].Prompt.Text(), "Deploy 42 went out at 14:02.") {
		t.Fatalf("the second prompt: %s", calls[1].Prompt.Text())
	}
}

func TestRunASlackMentionWithAToolCall(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Thread question"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("The thread asks about the launch.")))
	conv := f.Run(fixture.SlackMention("what is this thread about?"))
	if !slices.Equal(conv.ReplyTexts(), []string{"The thread asks about the launch."}) || !slices.Equal(conv.Reactions, []string{"eyes"}) {
		t.Fatalf("call: %+v", conv)
	}
	if len(conv.ToolCalls) != 1 || conv.ToolCalls[0].Name != "slackThreadRead" || conv.ToolCalls[0].Status != "completed" ||
		!strings.Contains(conv.ToolCalls[0].Output, "what is this thread about?") {
		t.Fatalf("tool calls %+v", conv.ToolCalls)
	}
	if got := conv.Turns; len(got) != 1 || got[0].Status != "succeeded" || len(got[0].ToolCalls) != 1 {
		t.Fatalf("turns %+v", got)
	}
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["channel"] != fixture.Channel {
		t.Fatalf("posts %+v", posts)
	}
}

// A WebMessage continuing a Slack conversation is a dashboard continue:
// the turn sees the thread and its reply stays off Slack.
func TestADashboardContinueOnASlackConversation(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Launch date"))
	m.Respond(loop, fakeai.Text("The launch is on March 12."), fakeai.Text("The beta opens on March 1."))
	conv := f.Run(fixture.SlackMention("when is the launch?"))
	next := conv.Continue(fixture.WebMessage("and the beta?"))
	if next.ID != conv.ID || !slices.Equal(next.ReplyTexts(), []string{"The beta opens on March 1."}) ||
		len(next.Turns) != 1 || next.Turns[0].Status != "succeeded" {
		t.Fatalf("the dashboard continue: %+v", next)
	}
	if posts := f.Slack().Calls("chat.postMessage"); len(posts) != 1 {
		t.Fatalf("chat.postMessage was called %d times; the dashboard's reply must stay off the thread", len(posts))
	}
	if p := m.Calls(loop)[1].Prompt.Text(); !strings.Contains(p, "The launch is on March 12.") || !strings.Contains(p, "and the beta?") {
		t.Fatalf("the dashboard turn's prompt: %s", p)
	}
	// The thread goes on in Slack after it.
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("Yes, both dates hold."))
	if got := next.Continue(fixture.SlackThreadMessage("do both hold?")); !slices.Equal(got.ReplyTexts(), []string{"Yes, both dates hold."}) {
		t.Fatalf("the thread after the dashboard: %+v", got)
	}
	if posts := f.Slack().Calls("chat.postMessage"); len(posts) != 2 {
		t.Fatalf("chat.postMessage was called %d times; want 2", len(posts))
	}
}

// fatalTB records the fixture's fatal failure and ends the goroutine,
// as testing does, so a test can check the message.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

// fatal runs fn in a goroutine, as the fixture's Fatalf ends it, and
// returns what the fixture failed with; within means fn must be over by
// then.
func (r *fatalTB) fatal(t *testing.T, within time.Duration, what string, fn func()) string {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("%s did not end within %s", what, within)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msg
}

func (r *fatalTB) Helper() {}
func (r *fatalTB) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// The model is recorded once from a stand-in gateway (fakeai.NewServer
// posing as https://ai-gateway.vercel.sh), then replayed with the
// stand-in gone: the same call gives the same results, and nothing goes
// live.
func TestTheModelIsRecordedThenReplayed(t *testing.T) {
	dir := t.TempDir()
	up := fakeai.NewServer(t)
	up.Respond(router, routed())
	up.Respond(titler, fakeai.Text("Deploy question"))
	up.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("Deploy 42 went out.")))
	run := func(f *fixture.Fixture) *fixture.Conversation {
		return f.Run(fixture.SlackMention("did deploy 42 go out?"))
	}
	live := fixture.New(t, exampleAgent(nil), fixture.Recordings(dir, proxy.ModeRecord), fixture.Upstream(up.Transport()))
	recorded := run(live)
	if err := live.Proxy().Flush(); err != nil {
		t.Fatal(err)
	}
	up.Close()

	offline := fixture.New(t, exampleAgent(nil), fixture.Recordings(dir, proxy.ModeReplay))
	replayed := run(offline)
	if !slices.Equal(replayed.ReplyTexts(), recorded.ReplyTexts()) || !slices.Equal(replayed.ReplyTexts(), []string{"Deploy 42 went out."}) ||
		len(replayed.ToolCalls) != 1 || replayed.ToolCalls[0].Output != recorded.ToolCalls[0].Output {
		t.Fatalf("replayed %+v; recorded %+v", replayed, recorded)
	}
	if st := offline.Proxy().Stats(); st.Replayed != 4 || st.Live != 0 || st.Missed != 0 {
		t.Fatalf("replay stats %+v", st)
	}
}

func TestARejectedModelRequestThenATurnThatSucceeds(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Status"))
	m.Respond(loop, fakeai.Text("All green."), fakeai.Text("Still green."))
	conv := f.Run(fixture.WebMessage("status?"))
	f.RejectNextModelRequest()
	failed := conv.Continue(fixture.WebMessage("and now?"))
	if len(failed.Turns) != 1 || failed.Turns[0].Status != "failed" || len(failed.Replies) != 1 || !strings.Contains(failed.Replies[0].Text, "model provider failed") {
		t.Fatalf("the rejected turn: %+v", failed)
	}
	ok := conv.Continue(fixture.WebMessage("and now?"))
	if len(ok.Turns) != 1 || ok.Turns[0].Status != "succeeded" || !slices.Equal(ok.ReplyTexts(), []string{"Still green."}) {
		t.Fatalf("the next turn: %+v", ok)
	}
}

func TestTheAgentWaitsOutASlackRateLimit(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Status"))
	m.Respond(loop, fakeai.Text("All green."))
	f.QueueSlackRateLimit("chat.postMessage", time.Second)
	conv := f.Run(fixture.SlackMention("status?"))
	posts := f.Slack().Calls("chat.postMessage")
	if !slices.Equal(conv.ReplyTexts(), []string{"All green."}) || len(posts) != 2 {
		t.Fatalf("replies %q after %d posts", conv.ReplyTexts(), len(posts))
	}
	if gap := posts[1].Time.Sub(posts[0].Time); gap < time.Second {
		t.Fatalf("the retry came %s after the 429; Retry-After was 1 s", gap)
	}
	if msgs := f.Slack().Messages(fixture.Channel); !slices.ContainsFunc(msgs, func(m slack.Message) bool { return m.Text == "All green." }) {
		t.Fatalf("the reply is not in the channel: %+v", msgs)
	}
}

func TestABatchIsOneTurn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Two questions"))
	m.Respond(loop, fakeai.Text("Both: yes."))
	conv := f.Run(fixture.Batch(fixture.SlackMention("did deploy 42 go out?"), fixture.SlackThreadMessage("and 43?")))
	if len(conv.Turns) != 1 || !slices.Equal(conv.ReplyTexts(), []string{"Both: yes."}) {
		t.Fatalf("call %+v", conv)
	}
	var inputs string
	connect(t, f.DatabaseURL()).QueryRow(context.Background(), `SELECT payload->>'inputMessageIds' FROM junior_conversation_events
		WHERE conversation_id = $1 AND type = 'turn_started'`, conv.ID).Scan(&inputs)
	if strings.Count(inputs, ".") != 2 {
		t.Fatalf("the turn's inputs %s; want two message ids", inputs)
	}
	if text := m.Calls(loop)[0].Prompt.Text(); !strings.Contains(text, "did deploy 42 go out?") || !strings.Contains(text, "and 43?") {
		t.Fatalf("the prompt: %s", text)
	}
}

// The contract's stop example: a stop sent while the agent's model
// request waits at the gateway interrupts the running turn.
func TestStopFromProgressInterruptsTheTurn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("A long report"))
	// The held request may still reach the model as the agent gives up
	// on it: an answer is scripted, and need not be used.
	m.Respond(loop, fakeai.Text("Here is the report."))
	defer m.DropUnused()
	var once sync.Once
	conv := f.Run(fixture.SlackMention("write me a long report"), fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		if p.Type == "model_request" && p.Purpose == "agent" {
			once.Do(func() { a.Send(fixture.SlackThreadMessage("stop")) })
		}
		return nil
	}))
	if len(conv.Turns) != 1 || conv.Turns[0].Outcome != "cancelled" || !slices.Equal(conv.ReplyTexts(), []string{"OK, I'll stay out of this thread."}) {
		t.Fatalf("call %+v", conv)
	}
}

// The contract's automation digest: a heartbeat runs the due automation,
// and Run returns the Conversation it started.
func TestHeartbeatRunsTheAutomationDigest(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(loop, fakeai.Text("Digest: 3 deploys, 0 incidents."))
	f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "daily-digest", Task: "Post the daily deploy digest."})
	conv := f.Run(fixture.Heartbeat())
	if !slices.Equal(conv.ReplyTexts(), []string{"Digest: 3 deploys, 0 incidents."}) || len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" {
		t.Fatalf("call %+v", conv)
	}
	posts := f.Slack().Calls("chat.postMessage")
	if len(posts) != 1 || posts[0].Params["channel"] != fixture.Channel {
		t.Fatalf("posts %+v", posts)
	}
	if !strings.Contains(m.Calls(loop)[0].Prompt.Text(), "Post the daily deploy digest.") {
		t.Fatalf("the prompt: %s", m.Calls(loop)[0].Prompt.Text())
	}
}

// errorsTB keeps the failures it is told.
type errorsTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errorsTB) Helper() {}
func (r *errorsTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestJudges(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	judgeModel := fakeai.Agent{Name: "judge", SystemPrefix: "You are a strict evaluator"}
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Launch date"))
	m.Respond(loop, fakeai.Text("The launch is on March 12; Priya owns it."))
	m.Respond(judgeModel, fakeai.Output(map[string]string{"answer": "A", "rationale": "names the date and the owner"}))
	rubric := judge.Rubric{Pass: []string{"names March 12", "names Priya as the owner"}, Fail: []string{"invents another date"}}
	conv := f.Run(fixture.WebMessage("When is the launch and who owns it?"), fixture.Criteria(rubric))
	if len(conv.Scores) != 1 || conv.Scores[0].Verdict.Score != 1 || conv.Scores[0].Failed {
		t.Fatalf("scores %+v", conv.Scores)
	}
	asked := m.Calls(judgeModel)[0].Prompt
	if !strings.Contains(asked.Text(), "<transcript>\nuser: When is the launch and who owns it?\nassistant: The launch is on March 12; Priya owns it.\n</transcript>") ||
		!strings.Contains(asked.Text(), "- Pass: names Priya as the owner") || asked.Model != judge.DefaultModel {
		t.Fatalf("the judge was asked: %s", asked.Text())
	}

	// A failing verdict fails the test with the rationale; so does an
	// answer that is not the judge's JSON.
	m.Respond(judgeModel, fakeai.Output(map[string]string{"answer": "E", "rationale": "it invents March 14"}), fakeai.Text("Looks good to me!"))
	for _, want := range []string{"scored " + conv.ID + " 0.00 (E), below 0.75: it invents March 14", `not {"answer", "rationale"} JSON`} {
		rec := &errorsTB{TB: t}
		fixture.SatisfyJudge(rec, conv, f.RubricJudge(rubric), fixture.DefaultThreshold)
		if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], want) {
			t.Errorf("failures %q; want one saying %s", rec.errs, want)
		}
	}
	if n := len(conv.Scores); n != 3 || !conv.Scores[1].Failed || !conv.Scores[2].Failed {
		t.Fatalf("scores %+v", conv.Scores)
	}
}

// A turn that continues each recorded conversation in recordings/ and
// Junior's launch-planning.json: only the turn under test calls the
// model, and its request carries the recorded history.
func TestATurnOnEveryRecording(t *testing.T) {
	files, _ := filepath.Glob("../../../recordings/samples/*.json")
	files = append(files, "../../../history/testdata/launch-planning.json")
	if len(files) < 2 {
		t.Fatalf("recordings: %v", files)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			rec, err := history.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
			m := f.Model()
			m.Respond(router, routed())
			m.Respond(loop, fakeai.Text("Picking up where we left off."))
			in := fixture.WebMessage("Where were we?")
			if rec.Surface == history.SurfaceSlack {
				in = fixture.SlackThreadMessage("Where were we?")
			}
			conv := f.Run(in, fixture.History(fixture.Recorded(file)))
			if len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" || !slices.Equal(conv.ReplyTexts(), []string{"Picking up where we left off."}) {
				t.Fatalf("the call: %+v", conv)
			}
			if n := len(m.AllCalls()); n != 2 {
				t.Fatalf("%d model calls; want the router's and the agent's", n)
			}
			// What the model must see of the recording: its first user
			// message, or, when it was compacted, the latest summary.
			var first string
			for _, e := range rec.Events {
				var p struct{ Role, Text, Summary string }
				json.Unmarshal(e.Payload, &p)
				switch {
				case e.Type == "message" && p.Role == "user" && first == "":
					first = p.Text
				case e.Type == "compaction" && p.Summary != "":
					first = p.Summary
				}
			}
			if first == "" {
				t.Fatal("the recording has no user message to look for")
			}
			prompt := m.Calls(loop)[0].Prompt
			if !strings.Contains(prompt.Text(), first[:min(40, len(first))]) || !strings.Contains(prompt.LastUser(), "Where were we?") {
				t.Fatalf("the prompt does not carry the recording: %s", prompt.Text())
			}
		})
	}
}

func TestAForkAtALoadedReplyGoesOn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(loop, fakeai.Text("Priya owns it."), fakeai.Text("The billing migration."))
	conv := f.Run(fixture.WebMessage("Who owns the launch?"), fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json")))
	if !slices.Equal(conv.ReplyTexts(), []string{"Priya owns it."}) {
		t.Fatalf("the call: %+v", conv)
	}
	// The recording's first reply.
	fork := conv.Fork(fixture.RecordedReply{Position: 1})
	if fork.ID == conv.ID || len(fork.Turns) != 0 {
		t.Fatalf("fork %+v", fork)
	}
	next := fork.Continue(fixture.WebMessage("And the main risk?"))
	if !slices.Equal(next.ReplyTexts(), []string{"The billing migration."}) {
		t.Fatalf("the fork's call: %+v", next)
	}
	prompt := m.Calls(loop)[1].Prompt.Text()
	if !strings.Contains(prompt, "Help me plan the Orbit launch") || !strings.Contains(prompt, "This Conversation is a fork") ||
		strings.Contains(prompt, "Who owns the launch?") {
		t.Fatalf("the fork's prompt: %s", prompt)
	}
}

// The contract's recall example: with the launch planned in history, the
// agent recalls it, a judge agrees, and the conversation goes on.
func TestRecallWithHistoryAndCriteriaThenContinue(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	judgeModel := fakeai.Agent{Name: "judge", SystemPrefix: "You are a strict evaluator"}
	m.Respond(router, routed(), routed())
	m.Respond(loop, fakeai.Text("We ship on March 12, and Priya owns it."), fakeai.Text("The billing migration."))
	m.Respond(judgeModel, fakeai.Output(map[string]string{"answer": "A", "rationale": "recalls the date and the owner"}))
	conv := f.Run(fixture.WebMessage("Remind me: when do we ship, and who owns it?"),
		fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json")),
		fixture.Criteria(judge.Rubric{Pass: []string{"says March 12", "names Priya"}, Fail: []string{"gives another date"}}))
	if len(conv.Scores) != 1 || conv.Scores[0].Verdict.Answer != "A" {
		t.Fatalf("scores %+v", conv.Scores)
	}
	// The judge read the recorded conversation as the earlier one.
	if asked := m.Calls(judgeModel)[0].Prompt.Text(); !strings.Contains(asked, "<earlier_conversation>\nuser: Help me plan the Orbit launch") {
		t.Fatalf("the judge was asked: %s", asked)
	}
	next := conv.Continue(fixture.WebMessage("And the main risk?"))
	if !slices.Equal(next.ReplyTexts(), []string{"The billing migration."}) || next.Turns[0].Status != "succeeded" {
		t.Fatalf("continue: %+v", next)
	}
}

// The contract's compaction example: under a small context window the
// agent summarizes the loaded history and the turn still succeeds.
func TestCompactionUnderASmallContextWindow(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Configure(fixture.AgentOptions{Limits: fixture.Limits{ContextWindowTokens: 500}}))
	m := f.Model()
	summarizer := fakeai.Agent{Name: "summary", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Summarize the conversation") }}
	m.Respond(router, routed())
	m.Respond(summarizer, fakeai.Text("Orbit ships March 12; Priya owns it; the billing migration is the risk."))
	m.Respond(loop, fakeai.Text("Priya."))
	conv := f.Run(fixture.WebMessage("Who owns Orbit?"), fixture.History(fixture.Recorded("../../../history/testdata/launch-planning.json")))
	if len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" {
		t.Fatalf("turns %+v", conv.Turns)
	}
	if p := m.Calls(loop)[0].Prompt.Text(); !strings.Contains(p, "<conversation-summary>") || strings.Contains(p, "Help me plan the Orbit launch") {
		t.Fatalf("the prompt after compaction: %s", p)
	}
}

// A turn past its slice pauses; the handler acts while the rest waits in
// the app's queue, and the turn goes on when it returns.
func TestProgressAtAPausedTurn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Configure(fixture.AgentOptions{Limits: fixture.Limits{TurnSlice: time.Nanosecond}}))
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Thread summary"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("The thread is about the launch.")),
		fakeai.Text("And the EU region is fine."))
	var paused []string
	conv := f.Run(fixture.SlackMention("summarize the thread"), fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		if p.Type == "paused" {
			paused = append(paused, p.TurnID)
			a.Send(fixture.SlackThreadMessage("and the EU region?"))
		}
		return nil
	}))
	if len(paused) != 1 || len(conv.Turns) != 2 || paused[0] != conv.Turns[0].ID {
		t.Fatalf("paused %v; turns %+v", paused, conv.Turns)
	}
	if !slices.Equal(conv.ReplyTexts(), []string{"The thread is about the launch.", "And the EU region is fine."}) ||
		conv.Turns[0].Status != "succeeded" || conv.Turns[1].Status != "succeeded" {
		t.Fatalf("call %+v", conv)
	}
}

// After each call the Conversation's report holds every call so far:
// input, replies, tool calls, turns, scores, the progress timeline and
// the model requests, whose cost is unknown (null), not zero.
// conversationReport is a conversation's report file, as a test reads it.
type conversationReport struct {
	ConversationID string
	Calls          []fixture.CallReport
}

// readReport reads the one conversation report in the test directory
// dir (a glob), and returns it and its bytes.
func readReport(t *testing.T, dir string) (conversationReport, []byte) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("report files %v; want one", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep conversationReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	return rep, raw
}

func TestEachCallIsReported(t *testing.T) {
	dir := t.TempDir()
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Reports(dir))
	m := f.Model()
	judgeModel := fakeai.Agent{Name: "judge", SystemPrefix: "You are a strict evaluator"}
	m.Respond(judgeModel, fakeai.Output(map[string]string{"answer": "B", "rationale": "close enough"}))
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Thread question"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text("It is about the launch.")),
		fakeai.Text("You're welcome."))
	conv := f.Run(fixture.SlackMention("what is in this thread?"))
	conv.Continue(fixture.SlackThreadMessage("thanks"), fixture.Criteria(judge.Rubric{Pass: []string{"is polite"}}))
	rep, raw := readReport(t, filepath.Join(dir, "TestEachCallIsReported"))
	if rep.ConversationID != conv.ID || len(rep.Calls) != 2 {
		t.Fatalf("report %s: %d calls", rep.ConversationID, len(rep.Calls))
	}
	first, second := rep.Calls[0], rep.Calls[1]
	if first.Input.Kind != "slack_mention" || first.Replies[0].Text != "It is about the launch." || first.ToolCalls[0].Name != "slackThreadRead" ||
		first.ToolCalls[0].Status != "completed" || first.Turns[0].Status != "succeeded" {
		t.Fatalf("first call %+v", first)
	}
	var agentCalls int
	for _, mr := range first.ModelRequests {
		if mr.Purpose == "agent" {
			agentCalls++
			if mr.InputTokens == 0 || mr.OutputTokens == 0 || mr.CostUSD != nil || mr.Priced {
				t.Errorf("model request %+v: want tokens, and an unknown cost", mr)
			}
		}
	}
	if agentCalls != 2 || !slices.ContainsFunc(first.Progress, func(p fixture.ProgressStep) bool { return p.Type == "tool_request" && p.Name == "slackThreadRead" }) {
		t.Fatalf("first call's model requests %+v, progress %+v", first.ModelRequests, first.Progress)
	}
	if len(second.Scores) != 1 || second.Scores[0].Verdict.Rationale != "close enough" || second.Replies[0].Text != "You're welcome." {
		t.Fatalf("second call %+v", second)
	}
	if strings.Contains(string(raw), exampleAgent(nil).Env["AI_GATEWAY_API_KEY"]) || strings.Contains(string(raw), exampleAgent(nil).Env["SLACK_BOT_TOKEN"]) {
		t.Fatal("the report holds a secret")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A turn that waits for an authorization stays started; CompleteAuth
// follows the link back to the app's callback, and that call's results
// hold the resumed turn, its tool call with the result, and its reply.
func TestCompleteAuthResumesTheWaitingTurn(t *testing.T) {
	github := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		switch {
		case r.URL.Host != "api.github.com" || r.URL.Path != "/search/issues":
			http.NotFound(rec, r)
		case !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer fixture-github-code-"):
			http.Error(rec, "bad credentials", http.StatusUnauthorized)
		default:
			fmt.Fprint(rec, `{"total_count":1,"items":[{"number":7,"title":"Billing migration rollback plan"}]}`)
		}
		return rec.Result(), nil
	})
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Recordings(t.TempDir(), proxy.ModeRecord),
		fixture.Upstream(github), fixture.Allow("https://api.github.com"))
	m := f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Billing issues"))
	m.Respond(loop, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
		Then(fakeai.Text("Issue 7 has the rollback plan.")))
	conv := f.Run(fixture.WebMessage("Which issue has the billing rollback plan?"))
	if len(conv.Turns) != 1 || conv.Turns[0].Status != "started" || len(conv.Replies) != 0 ||
		len(conv.ToolCalls) != 1 || conv.ToolCalls[0].Status != "running" {
		t.Fatalf("the call that waits for an authorization: %+v", conv)
	}
	done := conv.Continue(fixture.CompleteAuth("github"))
	if len(done.Turns) != 1 || done.Turns[0].ID != conv.Turns[0].ID || done.Turns[0].Status != "succeeded" {
		t.Fatalf("the resumed turn: %+v", done.Turns)
	}
	if !slices.Equal(done.ReplyTexts(), []string{"Issue 7 has the rollback plan."}) || len(done.Turns[0].Replies) != 1 {
		t.Fatalf("the resumed turn's reply: %+v", done)
	}
	if len(done.ToolCalls) != 1 || done.ToolCalls[0].Status != "completed" || !strings.Contains(done.ToolCalls[0].Output, "Billing migration rollback plan") ||
		len(done.Turns[0].ToolCalls) != 1 {
		t.Fatalf("the resumed turn's tool call: %+v", done.ToolCalls)
	}
	if calls := m.Calls(loop); len(calls) != 2 || !strings.Contains(calls[1].Prompt.Results[0].Content, "Billing migration rollback plan") {
		t.Fatalf("the model after the callback: %+v", calls)
	}
}
