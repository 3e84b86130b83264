package evalcmd_test

import (
	"os"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
)

// A program's cmd/evals/main.go: recorder eval ./cmd/evals builds and
// runs it with the command line's arguments.
func ExampleMain() {
	evalcmd.Main(myEvals(os.Getenv("MODEL_API_KEY"))...)
}

// myEvals stands for the program's own evals.
func myEvals(key string) []evals.Eval { return nil }
