// Command catalog is a user's test catalog, in a module of its own; its
// suite's fingerprint digests this file, read from the module's root.
package main

import (
	"time"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/catalog/catalogcmd"
	"github.com/agentvcr/agentvcr/fixture"
)

func main() {
	key := catalog.Credential{Env: "MYAGENT_API_KEY", Ref: catalog.Secret("MYAGENT_API_KEY")}
	catalogcmd.Main(&catalog.Catalog{Suites: []catalog.Suite{{
		ID: "greetings", Label: "Greetings", Size: 2, Rank: 1, Tier: "smoke", Grader: "matchers/v1",
		Sources:      []string{"cmd/catalog/*.go"},
		App:          fixture.App{Name: "myagent", Command: []string{"./bin/myagent"}, AddrEnv: "PORT", Routes: fixture.JuniorRoutes()},
		Profiles:     []catalog.Profile{{ID: "default", Model: "anthropic/claude-haiku-4.5", Provider: "anthropic", Credential: key}},
		Environments: []catalog.Environment{{ID: "process", Driver: "process", Deadline: time.Minute}},
		Cases: []catalog.Case{
			{ID: "hello", Input: "Say hello.", Expect: []catalog.Matcher{catalog.MessageContains("hello")}},
			{ID: "bye", Input: "Say bye.", Expect: []catalog.Matcher{catalog.MessageContains("bye")}},
		},
	}}})
}
