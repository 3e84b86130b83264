package catalogcmd_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/catalog/catalogcmd"
	"github.com/agentvcr/agentvcr/internal/clidoc"
)

var update = flag.Bool("update", false, "rewrite docs/cli's catalog page from the command")

// docs/cli/catalog.md is the command's own help, the flags of every catalog
// program (recorder catalog PKG passes them on): a change to the command
// fails this test until the page is made again.
func TestTheCLIReferenceIsCurrent(t *testing.T) {
	root := catalogcmd.Command(&catalog.Catalog{}, catalog.EnvResolver(func(string) string { return "" }))
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
		t.Fatalf("docs/cli is stale for %s: run go generate ./catalog/catalogcmd (go test ./catalog/catalogcmd -run TestTheCLIReferenceIsCurrent -update)", strings.Join(stale, ", "))
	}
}
