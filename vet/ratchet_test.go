package vet_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/vet"
)

var update = flag.Bool("update", false, "rewrite testdata/app/agentvcr-vet.json from the sample app's offences")

// sample vets the sample app under testdata/app with the public packages
// its ratchet declares.
func sample(t *testing.T) (*vet.Report, *vet.Ratchet) {
	t.Helper()
	r, err := vet.ReadRatchet(filepath.Join("testdata", "app", vet.RatchetFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := vet.Run(context.Background(), filepath.Join("testdata", "app"), r.Public, "./...")
	if err != nil {
		t.Fatal(err)
	}
	return rep, r
}

// The committed ratchet of the sample app is what Record writes from
// today's offences, byte for byte: one offence a line, sorted.
func TestTheSampleRatchetIsTodaysOffences(t *testing.T) {
	rep, r := sample(t)
	path := filepath.Join("testdata", "app", vet.RatchetFile)
	out := filepath.Join(t.TempDir(), vet.RatchetFile)
	if *update {
		out = path
	}
	if err := r.Record(rep).WriteFile(out); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not today's offences (go test ./vet -run %s -update rewrites it); Record writes:\n%s", path, t.Name(), got)
	}
	if len(rep.AgentTests) != 6 || len(rep.Findings) < 15 {
		t.Fatalf("vetted %d agent tests (%q), found %d offences; want the 6 of the sample's agent, clean, imports, internals and modelfakes, with every rule's offences",
			len(rep.AgentTests), rep.AgentTests, len(rep.Findings))
	}
}

// A ratchet passes when it lists what the vet finds; it fails on an
// offence it does not list (or lists fewer of) and on a listed offence
// that is fixed (found fewer times, or in a file that is gone). Entries
// of files the vet did not look at are another vet's. Each ratchet is
// written to a file and read back; Prune then drops the fixed ones and
// adds nothing, and Record lists everything and keeps the others'.
func TestTheRatchetFailsOnNewOffencesAndOnFixedOnesStillListed(t *testing.T) {
	rep, today := sample(t)
	if len(today.Offences) == 0 {
		t.Fatal("the sample's ratchet lists no offence")
	}
	const (
		upstream = "modelfakes/modelfakes_test.go model-fakes fixture.Upstream"
		dbURL    = "internals/internals_test.go internals (*fixture.Fixture).DatabaseURL"
		gone     = "gone/gone_test.go internals store.Open"
		others   = "bottest/bottest.go internals agent.Start" // a file that is no test
	)
	tests := []struct {
		name         string
		edit         func(list []vet.Offence) []vet.Offence
		added, fixed []string // "file rule what listed found"
	}{
		{name: "unchanged", edit: func(list []vet.Offence) []vet.Offence { return list }},
		{name: "a new offence: not listed", edit: func(list []vet.Offence) []vet.Offence { return without(list, dbURL) },
			added: []string{dbURL + " 0 1"}},
		{name: "a new offence: more than listed", edit: func(list []vet.Offence) []vet.Offence { return counted(list, upstream, 1) },
			added: []string{upstream + " 1 2"}},
		{name: "a fixed offence still listed: found fewer times", edit: func(list []vet.Offence) []vet.Offence { return counted(list, dbURL, 3) },
			fixed: []string{dbURL + " 3 1"}},
		{name: "a fixed offence still listed: its file is gone", edit: func(list []vet.Offence) []vet.Offence { return append(list, offence(gone, 2)) },
			fixed: []string{gone + " 2 0"}},
		{name: "another vet's file: left alone", edit: func(list []vet.Offence) []vet.Offence { return append(list, offence(others, 1)) }},
		{name: "new and fixed at once", edit: func(list []vet.Offence) []vet.Offence { return append(without(list, upstream), offence(gone, 1)) },
			added: []string{upstream + " 0 2"}, fixed: []string{gone + " 1 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), vet.RatchetFile)
			edited := &vet.Ratchet{Public: today.Public, Offences: tt.edit(slices.Clone(today.Offences))}
			if err := edited.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			r, err := vet.ReadRatchet(path)
			if err != nil {
				t.Fatal(err)
			}
			added, fixed := r.Compare(rep)
			if got := changes(added); !slices.Equal(got, tt.added) {
				t.Errorf("new offences %q; want %q", got, tt.added)
			}
			if got := changes(fixed); !slices.Equal(got, tt.fixed) {
				t.Errorf("fixed offences still listed %q; want %q", got, tt.fixed)
			}
			for _, c := range added {
				if len(c.Findings) != c.Found {
					t.Errorf("%s %s %s: %d findings for %d found", c.File, c.Rule, c.What, len(c.Findings), c.Found)
				}
			}

			pruned := r.Prune(rep)
			if a, f := pruned.Compare(rep); len(f) != 0 || !slices.Equal(changes(a), tt.added) {
				t.Errorf("after Prune: new %q, fixed %q; want new %q and nothing fixed", changes(a), changes(f), tt.added)
			}
			recorded := r.Record(rep)
			if a, f := recorded.Compare(rep); len(a) != 0 || len(f) != 0 {
				t.Errorf("after Record: new %q, fixed %q; want none", changes(a), changes(f))
			}
			for _, keep := range []*vet.Ratchet{pruned, recorded} {
				if has(r.Offences, others) != has(keep.Offences, others) {
					t.Errorf("another vet's entry %q: listed %v before, %v after", others, has(r.Offences, others), has(keep.Offences, others))
				}
				if !slices.Equal(keep.Public, today.Public) {
					t.Errorf("public %q; want %q kept", keep.Public, today.Public)
				}
			}
		})
	}
}

// A missing ratchet is fs.ErrNotExist, for recorder vet to start from
// none; a file that is not a ratchet is ErrBadRatchet.
func TestReadRatchetSaysWhatIsWrong(t *testing.T) {
	tests := []struct {
		name, content string
		want          error
	}{
		{"missing", "", fs.ErrNotExist},
		{"not JSON", "{", vet.ErrBadRatchet},
		{"an unknown field", `{"public": [], "offences": [], "baseline": true}`, vet.ErrBadRatchet},
		{"an offence without a count", `{"offences": [{"file": "a_test.go", "rule": "imports", "what": "x"}]}`, vet.ErrBadRatchet},
		{"an offence without a what", `{"offences": [{"file": "a_test.go", "rule": "imports", "count": 1}]}`, vet.ErrBadRatchet},
		{"an offence of an unknown rule", `{"offences": [{"file": "a_test.go", "rule": "nope", "what": "x", "count": 1}]}`, vet.ErrBadRatchet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), vet.RatchetFile)
			if tt.content != "" {
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := vet.ReadRatchet(path); !errors.Is(err, tt.want) {
				t.Fatalf("ReadRatchet: %v; want %v", err, tt.want)
			}
		})
	}
}

func offence(key string, count int) vet.Offence {
	var o vet.Offence
	fmt.Sscanf(key, "%s %s", &o.File, &o.Rule)
	o.What = key[len(o.File)+len(o.Rule)+2:]
	o.Count = count
	return o
}

func keyOf(o vet.Offence) string { return o.File + " " + o.Rule + " " + o.What }

func has(list []vet.Offence, key string) bool {
	return slices.ContainsFunc(list, func(o vet.Offence) bool { return keyOf(o) == key })
}

func without(list []vet.Offence, key string) []vet.Offence {
	return slices.DeleteFunc(list, func(o vet.Offence) bool { return keyOf(o) == key })
}

func counted(list []vet.Offence, key string, n int) []vet.Offence {
	for i := range list {
		if keyOf(list[i]) == key {
			list[i].Count = n
		}
	}
	return list
}

func changes(cs []vet.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s %s %s %d %d", c.File, c.Rule, c.What, c.Listed, c.Found))
	}
	return out
}
