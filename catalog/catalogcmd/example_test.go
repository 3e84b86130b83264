package catalogcmd_test

import (
	"time"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/catalog/catalogcmd"
	"github.com/agentvcr/agentvcr/fixture"
)

// A program's cmd/catalog/main.go: recorder catalog ./cmd/catalog --list
// builds and runs it, and --suite, --profile and --environment run the
// cells they select. The catalog has no Sources of its own, so the
// files its suites name are read from the working directory: run it
// from the module's root (or give it an embed.FS as Sources).
func ExampleMain() {
	key := catalog.Credential{Env: "MODEL_API_KEY", Ref: catalog.Secret("model-api-key")}
	catalogcmd.Main(&catalog.Catalog{
		Suites: []catalog.Suite{{
			ID: "answers", Label: "Answers", Tier: "smoke", Rank: 1, Size: 1,
			Profiles:     []catalog.Profile{{ID: "sonnet", Model: "anthropic/claude-sonnet-4.5", Provider: "anthropic", Credential: key}},
			Environments: []catalog.Environment{{ID: "in-process", Driver: "in-process", Deadline: 2 * time.Minute}},
			Cases: []catalog.Case{
				{ID: "refund-window", Input: "How long is the refund window?", Expect: []catalog.Matcher{catalog.MessageContains("30 days")}},
			},
			App:     fixture.App{Name: "support", Command: []string{"./bin/support-agent"}, AddrEnv: "AGENT_ADDR", Routes: fixture.JuniorRoutes()},
			Grader:  "matchers/v1",
			Sources: []string{"prompts/agent.txt"},
		}},
	})
}
