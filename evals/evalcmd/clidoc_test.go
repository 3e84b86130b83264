package evalcmd_test

import (
	"flag"
	"testing"

	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/internal/clidoc"
)

var update = flag.Bool("update", false, "rewrite docs/cli's eval page from the command")

// docs/cli/eval.md is the command's own help, the flags of every evals
// program (recorder eval PKG passes them on): a change to the command
// fails this test until the page is made again.
func TestTheCLIReferenceIsCurrent(t *testing.T) {
	root := evalcmd.Command()
	clidoc.Test(t, root, "../../docs/cli", "./evals/evalcmd", *update)
}
