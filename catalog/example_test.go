package catalog_test

import (
	"fmt"
	"testing/fstest"
	"time"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/fixture"
)

// A catalog is data: a suite declares its profiles, environments and
// cases, and its size, so that adding a case is a reviewed change. List
// validates it and names every cell; the eval runner runs the cells that
// Select picks.
func ExampleCatalog_List() {
	key := catalog.Credential{Env: "AI_GATEWAY_API_KEY", Ref: catalog.Secret("ai-gateway")}
	c := &catalog.Catalog{
		Sources: fstest.MapFS{"prompts/agent.txt": {Data: []byte("You are a support agent.")}},
		Suites: []catalog.Suite{{
			ID: "answers", Label: "Answers", Tier: "smoke", Rank: 1, Size: 4,
			Profiles: []catalog.Profile{
				{ID: "sonnet", Model: "anthropic/claude-sonnet-4.5", Provider: "anthropic", Credential: key},
				{ID: "haiku", Model: "anthropic/claude-haiku-4.5", Provider: "anthropic", Credential: key},
			},
			Environments: []catalog.Environment{{ID: "in-process", Driver: "in-process", Deadline: 2 * time.Minute}},
			Cases: []catalog.Case{
				{ID: "refund-window", Input: "How long is the refund window?", Expect: []catalog.Matcher{catalog.MessageContains("30 days")}},
				{ID: "launch-date", Input: "When is the launch?", Expect: []catalog.Matcher{catalog.MessageContains("March 12")}},
			},
			App:     fixture.App{Name: "support", Command: []string{"./bin/support-agent"}, AddrEnv: "PORT", Routes: fixture.JuniorRoutes()},
			Grader:  "matchers/v1",
			Sources: []string{"prompts/agent.txt"},
		}},
	}
	list, err := c.List()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range list {
		fmt.Printf("%s (%s, rank %d): %d cells\n", s.ID, s.Tier, s.Rank, s.Size)
		for _, cell := range s.Cells {
			fmt.Println(" ", cell)
		}
	}
	// Output:
	// answers (smoke, rank 1): 4 cells
	//   answers.sonnet.in-process.refund-window
	//   answers.sonnet.in-process.launch-date
	//   answers.haiku.in-process.refund-window
	//   answers.haiku.in-process.launch-date
}
