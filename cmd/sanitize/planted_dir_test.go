package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/sanitize"
)

// TestDirectoryRunOfThePlantedDirectory runs the command over the
// sanitizer's planted directory (sanitize/testdata/planted-dir, which
// sanitize's TestPlantedDirectory hunts through): every file is written,
// each the same bytes the library writes when it learns every file first,
// check passes the output and fails the input.
func TestDirectoryRunOfThePlantedDirectory(t *testing.T) {
	in := filepath.Join("..", "..", "sanitize", "testdata", "planted-dir")
	entries, err := os.ReadDir(in)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".json" {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) < 3 {
		t.Fatalf("the planted directory has %d files", len(names))
	}
	out := filepath.Join(t.TempDir(), "out")
	r := sanitizeCmd(t, withKey, "", "-o", out, in)
	if r.code != 0 {
		t.Fatalf("sanitize -o out %s: exit %d\n%s", in, r.code, r.stderr)
	}

	s, err := sanitize.New(sanitize.Options{Key: []byte(key)})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	for _, name := range names {
		if docs[name], err = os.ReadFile(filepath.Join(in, name)); err != nil {
			t.Fatal(err)
		}
		if err := s.Learn(docs[name], name); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		want, err := s.Sanitize(docs[name], name)
		if err != nil {
			t.Fatalf("the library refused %s: %v", name, err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("%s was not written: %v", name, err)
		}
		if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
			t.Errorf("%s: the command wrote other bytes than the library", name)
		}
	}
	if c := sanitizeCmd(t, nil, "", "check", out); c.code != 0 {
		t.Errorf("check of the output: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	for _, name := range names {
		if c := sanitizeCmd(t, nil, "", "check", filepath.Join(in, name)); c.code != 1 {
			t.Errorf("check of the raw %s: exit %d, want 1", name, c.code)
		}
	}
}
