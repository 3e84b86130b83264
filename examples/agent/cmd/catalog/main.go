// Command catalog is the reference agent's test catalog: it lists the
// suites and their cells, and runs the cells it is asked for as evals
// with the real model. Run it from the agentvcr repository's root,
// where the sources its fingerprints digest are:
//
//	recorder catalog ./examples/agent/cmd/catalog --list
//	AI_GATEWAY_API_KEY=... recorder catalog ./examples/agent/cmd/catalog --suite threads --profile sonnet --reps 2
package main

import (
	"github.com/agentvcr/agentvcr/catalog/catalogcmd"
	"github.com/agentvcr/agentvcr/examples/agent/agentcatalog"
)

func main() {
	catalogcmd.Main(agentcatalog.New())
}
