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
	clidoc.Test(t, root, "../../docs/cli", "./cmd/recorder", *update)
}
