package evalcmd_test

import (
	"flag"
	"strings"
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
	if *update {
		if err := clidoc.Update(root, "../../docs/cli"); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := clidoc.Stale(root, "../../docs/cli")
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("docs/cli is stale for %s: run go generate ./evals/evalcmd (go test ./evals/evalcmd -run TestTheCLIReferenceIsCurrent -update)", strings.Join(stale, ", "))
	}
}
