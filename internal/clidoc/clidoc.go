// Package clidoc writes the command-line reference of a cobra command
// tree as Markdown pages (cobra/doc), one per command, and says which
// committed pages no longer match the commands: a command's test fails
// on a stale page, and its -update flag rewrites them.
package clidoc

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Render returns root's pages by file name: root's name, then each
// subcommand's, joined by "_" (recorder_export.md).
func Render(root *cobra.Command) (map[string][]byte, error) {
	noStamp(root) // a date in each page would make it stale every day
	// cobra adds -v, --version when the command runs, which --help
	// lists: the page lists it too.
	root.InitDefaultVersionFlag()
	dir, err := os.MkdirTemp("", "clidoc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return nil, fmt.Errorf("clidoc: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pages := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		pages[e.Name()] = b
	}
	return pages, nil
}

func noStamp(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		noStamp(sub)
	}
}

// Stale returns the names of root's pages in dir that differ from what
// Render makes, are missing, or belong to a command that is gone.
func Stale(root *cobra.Command, dir string) ([]string, error) {
	pages, err := Render(root)
	if err != nil {
		return nil, err
	}
	have, err := committed(root, dir)
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(b, pages[name]) {
			stale = append(stale, name)
		}
	}
	for _, name := range have {
		if pages[name] == nil {
			stale = append(stale, name)
		}
	}
	return stale, nil
}

// Update writes root's pages into dir, and removes those of commands
// that are gone.
func Update(root *cobra.Command, dir string) error {
	pages, err := Render(root)
	if err != nil {
		return err
	}
	have, err := committed(root, dir)
	if err != nil {
		return err
	}
	for _, name := range have {
		if pages[name] == nil {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// committed lists root's pages in dir: root.md and root_*.md.
func committed(root *cobra.Command, dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); n == root.Name()+".md" || strings.HasPrefix(n, root.Name()+"_") && strings.HasSuffix(n, ".md") {
			names = append(names, n)
		}
	}
	return names, nil
}

// Test is a command's test of its pages in dir: with update it rewrites
// them first; then it fails t, naming the stale pages and pkg, the
// package whose go generate makes them again.
func Test(t testing.TB, root *cobra.Command, dir, pkg string, update bool) {
	t.Helper()
	if update {
		if err := Update(root, dir); err != nil {
			t.Fatal(err)
		}
	}
	stale, err := Stale(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) > 0 {
		t.Fatalf("docs/cli is stale for %s: run go generate %s (go test %s -run TestTheCLIReferenceIsCurrent -update)", strings.Join(stale, ", "), pkg, pkg)
	}
}
