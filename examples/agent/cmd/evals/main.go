// Command evals runs the reference agent's evals with the real model:
// "answers", ten questions with one right answer each, and its variant
// "haiku", the agent loop on the fast model. The agent calls the model
// through the AI gateway with $AI_GATEWAY_API_KEY, which --dry-run and
// --list do not need.
//
//	recorder eval ./examples/agent/cmd/evals --dry-run
//	AI_GATEWAY_API_KEY=... recorder eval ./examples/agent/cmd/evals --reps 3 --max-cost-usd 1
package main

import (
	"os"

	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
)

func main() {
	evalcmd.Main(agentevals.Answers(os.Getenv("AI_GATEWAY_API_KEY")))
}
