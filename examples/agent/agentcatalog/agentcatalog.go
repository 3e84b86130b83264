package agentcatalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/fixture"
)

// gateway is the credential every profile needs: the AI gateway's key.
var gateway = catalog.Credential{Env: "AI_GATEWAY_API_KEY", Ref: catalog.Secret("AI_GATEWAY_API_KEY")}

// Profiles are the agent's configurations: its model from its own
// constants, and its options.
func Profiles() []catalog.Profile {
	return []catalog.Profile{
		{ID: "sonnet", Model: agentevals.Sonnet, Provider: "anthropic", Credential: gateway,
			Runtime: map[string]string{"model": agentevals.Sonnet},
			Options: func() map[string]string { return map[string]string{"AGENT_MODEL": agentevals.Sonnet} }},
		{ID: "haiku", Model: agentevals.Haiku, Provider: "anthropic", Credential: gateway,
			Runtime: map[string]string{"model": agentevals.Haiku},
			Options: func() map[string]string { return map[string]string{"AGENT_MODEL": agentevals.Haiku} }},
		// One tool call a turn: a limit to see the agent answer within.
		// Its binary takes the same option, but this profile is declared
		// for in-process runs only.
		{ID: "sonnet-one-tool", Model: agentevals.Sonnet, Provider: "anthropic", Credential: gateway,
			SupportedEnvironments: []string{"in-process"},
			Runtime:               map[string]string{"model": agentevals.Sonnet},
			Options: func() map[string]string {
				return map[string]string{"AGENT_MODEL": agentevals.Sonnet, "AGENT_TOOL_CALL_LIMIT": "1"}
			}},
	}
}

// Environments are where the agent runs: in the test's process, or as
// its own binary, built by the environment's setup.
func Environments() []catalog.Environment {
	bin := &binary{}
	return []catalog.Environment{
		{ID: "in-process", Driver: "in-process", Deadline: 2 * time.Minute, Metadata: map[string]string{"isolation": "shared process"}},
		{ID: "process", Driver: "process", Deadline: 3 * time.Minute, Metadata: map[string]string{"isolation": "own process"},
			Setup: bin.build, Probe: bin.probe, Cleanup: bin.remove,
			App: func(_ context.Context, app fixture.App) fixture.App {
				app.Handler, app.Command, app.AddrEnv = nil, []string{bin.path}, "AGENT_ADDR"
				return app
			}},
	}
}

// binary is the agent's binary the process environment runs.
type binary struct {
	dir, path string
}

func (b *binary) build(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "agentcatalog-")
	if err != nil {
		return err
	}
	b.dir, b.path = dir, filepath.Join(dir, "agent")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", b.path, "github.com/agentvcr/agentvcr/examples/agent").CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build examples/agent (run from the repository, with Go installed): %v\n%s", err, out)
	}
	return nil
}

func (b *binary) probe(context.Context) error {
	st, err := os.Stat(b.path)
	if err != nil {
		return err
	}
	if st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", b.path)
	}
	return nil
}

func (b *binary) remove(context.Context) error {
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}

// sources are the files whose contents are part of both suites'
// fingerprints: this definition, the grading (package catalog), and the
// agent itself: its routes, prompts, tools, model calls and storage.
var sources = []string{"examples/agent/agentcatalog/*.go", "catalog/*.go", "examples/agent/main.go",
	"examples/agent/app/*.go", "examples/agent/llm/*.go", "examples/agent/store/*.go"}

// New is the reference agent's catalog. Its sources are named from the
// agentvcr repository's root, and it has no Sources of its own: its
// program (examples/agent/cmd/catalog) reads them from the working
// directory, so it runs from the root. The gateway's key is not part of
// it: profiles name it by reference, and a run resolves it.
func New() *catalog.Catalog {
	app := agentevals.App("")
	delete(app.Env, "AI_GATEWAY_API_KEY") // a credential: resolved per run
	profiles, envs := Profiles(), Environments()
	return &catalog.Catalog{Suites: []catalog.Suite{
		{
			ID: "answers", Label: "Answers", Description: "Questions with one right answer, asked in a Slack thread.",
			Size: 20, Rank: 1, Tier: "smoke", Grader: "matchers/v1", Sources: sources,
			Profiles: profiles, Environments: envs, App: app, Prices: agentevals.Prices,
			Cases: []catalog.Case{
				{ID: "minutes", Input: "How many minutes are in 3 hours and 20 minutes? Reply with the number only.",
					Expect: []catalog.Matcher{catalog.MessageContains("200"), catalog.TurnState("succeeded")}},
				{ID: "capital", Input: "What is the capital of Australia? Reply with the city only.",
					Expect: []catalog.Matcher{catalog.MessageContains("Canberra"), catalog.RunState("succeeded")}},
				{ID: "launch-date", Input: "The launch moved from March 3 to March 12. What is the new launch date? Reply with the date only.",
					Expect: []catalog.Matcher{catalog.MessageRegex(`(?i)\bmarch\s+12\b`), catalog.TurnState("succeeded")}},
				{ID: "sort", Input: "Sort 9, 2 and 7 in ascending order. Reply with the numbers separated by commas.",
					Expect: []catalog.Matcher{catalog.MessageContains("2, 7, 9")}},
			},
		},
		{
			ID: "threads", Label: "Threads", Description: "The agent reads its Slack thread with its tool before it answers.",
			Size: 10, Rank: 2, Tier: "nightly", Grader: "matchers/v1", Sources: sources,
			Profiles: profiles, Environments: envs, App: app, Prices: agentevals.Prices,
			Cases: []catalog.Case{
				{ID: "thread-author", Input: "Read this Slack thread with your tool and reply with the user id of whoever started it, and nothing else.",
					Expect: []catalog.Matcher{
						catalog.MessageExact("U0TESTUSER"),
						catalog.JSONPath(`events.#(data.type=="tool_calls").data.calls.0.name`, "slackThreadRead"),
						catalog.TurnState("succeeded"),
					}},
				{ID: "thread-report", Input: "Read this Slack thread with your tool and tell me what it asks, in one sentence.",
					Expect: []catalog.Matcher{
						catalog.MessageRegex(`\S`),
						catalog.JSONSchema(`{"type":"object","required":["events"],"properties":{"events":{"type":"array","minItems":1}}}`),
						catalog.RunState("succeeded"),
					}},
			},
		},
	}}
}
