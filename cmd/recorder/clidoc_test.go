package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/clidoc"
)

var update = flag.Bool("update", false, "rewrite docs/cli's recorder pages from the commands")

// The CLI reference in docs/cli is the commands' own help: a change to
// a command fails this test until the pages are made again.
func TestTheCLIReferenceIsCurrent(t *testing.T) {
	root := newRoot(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
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
		t.Fatalf("docs/cli is stale for %s: run go generate ./cmd/recorder (go test ./cmd/recorder -run TestTheCLIReferenceIsCurrent -update)", strings.Join(stale, ", "))
	}
}
