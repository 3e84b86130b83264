package main

import (
	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/internal/cli"
)

// newEvalCmd runs the reference agent's evals (examples/agent) with the
// real model: evals.Command with the gateway key from the environment.
func newEvalCmd(e *env) *cobra.Command {
	key := e.getenv("AI_GATEWAY_API_KEY")
	cmd := evals.Command(agentevals.Answers(key))
	cmd.Short = "Run the reference agent's evals with the real model, and score it"
	cmd.Long += `

recorder eval runs the reference agent's (examples/agent) evals: "answers",
ten questions with one right answer each, with a variant "haiku" that runs
the agent loop on the fast model. The agent calls the model through the AI
gateway with $AI_GATEWAY_API_KEY, which --dry-run and --list do not need.
A program of your own runs its evals the same way with evals.Main.`
	cmd.Example = `  recorder eval --dry-run
  recorder eval --list
  AI_GATEWAY_API_KEY=... recorder eval --reps 3 --concurrency 4 --max-cost-usd 1
  AI_GATEWAY_API_KEY=... recorder eval answers --variant haiku --reps 3 --json > report.json`
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		dry, _ := cmd.Flags().GetBool("dry-run")
		list, _ := cmd.Flags().GetBool("list")
		if key == "" && !dry && !list {
			return cli.Usagef("AI_GATEWAY_API_KEY is not set: the agent calls the real model through the AI gateway (--dry-run needs none)")
		}
		return nil
	}
	return cmd
}
