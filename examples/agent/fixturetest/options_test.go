package fixturetest_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

// expectTB is the test, except inside expect: there the fixture's fatal
// failure is what fn is expected to end with, and it is recorded, and
// fn's goroutine ended, as testing would. It counts the cleanups
// registered on it: each thing the fixture starts registers one.
type expectTB struct {
	testing.TB
	mu        sync.Mutex
	expecting bool
	msg       string
	cleanups  int
}

func (e *expectTB) Helper() {}

func (e *expectTB) Cleanup(f func()) {
	e.mu.Lock()
	e.cleanups++
	e.mu.Unlock()
	e.TB.Cleanup(f)
}

func (e *expectTB) Fatalf(format string, args ...any) {
	e.mu.Lock()
	expecting := e.expecting
	if expecting {
		e.msg = fmt.Sprintf(format, args...)
	}
	e.mu.Unlock()
	if !expecting {
		e.TB.Fatalf(format, args...)
	}
	runtime.Goexit()
}

// expect runs fn, which must fail the fixture within 30 s, and returns
// the failure and how many cleanups fn registered.
func (e *expectTB) expect(t *testing.T, what string, fn func()) (msg string, cleanups int) {
	t.Helper()
	e.mu.Lock()
	e.expecting, e.msg = true, ""
	before := e.cleanups
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not end within 30 s", what)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expecting = false
	if e.msg == "" {
		t.Fatalf("%s did not fail", what)
	}
	return e.msg, e.cleanups - before
}

// The typed tool-call limit reaches the agent, in-process and as its
// binary: after one tool call the agent offers the model no tools, and
// the model must answer.
func TestTheToolCallLimitReachesTheAgent(t *testing.T) {
	final := fakeai.Agent{Name: "final", Match: func(p *fakeai.Prompt) bool { return len(p.Tools) == 0 && len(p.Results) > 0 }}
	tests := []struct {
		name    string
		process bool
	}{{name: "in-process"}, {name: "process", process: true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := exampleAgent(nil)
			if tt.process {
				bin := filepath.Join(t.TempDir(), "agent")
				if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/examples/agent").CombinedOutput(); err != nil {
					t.Fatalf("go build examples/agent: %v\n%s", err, out)
				}
				app.Handler, app.Command, app.AddrEnv = nil, []string{bin}, "AGENT_ADDR"
			}
			f := fixture.New(t, app, fixture.ScriptedModel(), fixture.Configure(fixture.AgentOptions{Limits: fixture.Limits{ToolCalls: 1}}))
			m := f.Model()
			m.Respond(router, routed())
			m.Respond(titler, fakeai.Text("Thread question"))
			m.Respond(loop, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})))
			m.Respond(final, fakeai.Text("It is about the launch."))
			conv := f.Run(fixture.SlackMention("what is in this thread?"))
			if !slices.Equal(conv.ReplyTexts(), []string{"It is about the launch."}) || len(conv.ToolCalls) != 1 {
				t.Fatalf("call %+v", conv)
			}
			if first, last := m.Calls(loop), m.Calls(final); len(first) != 1 || len(first[0].Prompt.Tools) == 0 || len(last) != 1 {
				t.Fatalf("the agent's requests: %d with tools, %d without after its one tool call", len(first), len(last))
			}
		})
	}
}

// The reference agent has no Slack cross-actor steering mode (a thread
// message waits for the running turn), so asking for one fails at once,
// naming the option and the app, before anything starts.
func TestSlackCrossActorSteeringIsNotTheAgents(t *testing.T) {
	rec := &expectTB{TB: t}
	steer := fixture.AgentOptions{SlackCrossActorSteering: "steer"}
	msg, started := rec.expect(t, "New", func() { fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel(), fixture.Configure(steer)) })
	if !strings.Contains(msg, "app examples/agent does not take the agent option SlackCrossActorSteering") || started != 0 {
		t.Fatalf("New failed with %q after %d cleanups; want the option named, before anything started", msg, started)
	}
	f := fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel())
	msg, started = rec.expect(t, "Agent", func() { f.Agent(steer) })
	if !strings.Contains(msg, "app examples/agent does not take the agent option SlackCrossActorSteering") || started != 0 {
		t.Fatalf("Agent failed with %q after %d cleanups; want the option named, before the instance started", msg, started)
	}
}
