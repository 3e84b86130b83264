package catalogcmd_test

import (
	"flag"
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
	clidoc.Test(t, root, "../../docs/cli", "./catalog/catalogcmd", *update)
}
