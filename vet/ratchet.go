package vet

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// RatchetFile is the ratchet's name at the root of a module, where
// recorder vet looks for it.
const RatchetFile = "agentvcr-vet.json"

// RatchetPath returns where the ratchet of the module holding dir is:
// RatchetFile at the module's root.
func RatchetPath(dir string) (string, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, RatchetFile), nil
}

// ErrBadRatchet is the error of ReadRatchet for a file that is not a
// ratchet.
var ErrBadRatchet = errors.New("not a ratchet file")

// A Ratchet is the list of a module's agent-test offences as of the day
// it was written, which may only get shorter: a new offence fails the
// vet, and so does a listed one that was fixed until Prune drops it. It
// also declares the app's packages agent tests may use (Public). Offences
// are counted by file, rule and what, not by line, so that an edit
// elsewhere in a file leaves the ratchet as it is.
type Ratchet struct {
	// Public are the app's packages agent tests may import and call:
	// import paths, or a path ending in "/..." for a tree (NewAnalyzer).
	Public []string `json:"public"`
	// Offences are today's offences, by file, rule and what.
	Offences []Offence `json:"offences"`
}

// An Offence is the offences of one file, rule and what.
type Offence struct {
	File  string `json:"file"` // as Finding.File
	Rule  string `json:"rule"`
	What  string `json:"what"`
	Count int    `json:"count"` // 1 or more
}

// ReadRatchet reads the ratchet at path. A missing file is an error that
// wraps fs.ErrNotExist; a file that is not a ratchet wraps ErrBadRatchet.
func ReadRatchet(path string) (*Ratchet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	r := &Ratchet{}
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrBadRatchet, err)
	}
	for _, o := range r.Offences {
		if o.File == "" || o.Rule == "" || o.What == "" || o.Count < 1 {
			return nil, fmt.Errorf("%s: %w: an offence needs a file, a rule, a what and a count of 1 or more: %+v", path, ErrBadRatchet, o)
		}
		if o.Rule != RuleImports && o.Rule != RuleModelFakes && o.Rule != RuleInternals {
			return nil, fmt.Errorf("%s: %w: rule %q is none of %s, %s, %s", path, ErrBadRatchet, o.Rule, RuleImports, RuleModelFakes, RuleInternals)
		}
	}
	return r, nil
}

// WriteFile writes the ratchet to path, its offences sorted, one a line,
// so that a change to it reads as a diff.
func (r *Ratchet) WriteFile(path string) error {
	var b bytes.Buffer
	b.WriteString("{\n  \"public\": ")
	if err := writeList(&b, r.Public); err != nil {
		return err
	}
	b.WriteString(",\n  \"offences\": ")
	if err := writeList(&b, sorted(r.Offences)); err != nil {
		return err
	}
	b.WriteString("\n}\n")
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// writeList writes items as a JSON array with one item on each line.
func writeList[T any](b *bytes.Buffer, items []T) error {
	b.WriteByte('[')
	for i, item := range items {
		line, err := json.Marshal(item)
		if err != nil {
			return err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "\n    %s", line)
	}
	if len(items) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteByte(']')
	return nil
}

// A Change is a file, rule and what whose count differs from the
// ratchet's.
type Change struct {
	File   string `json:"file"`
	Rule   string `json:"rule"`
	What   string `json:"what"`
	Listed int    `json:"listed"` // in the ratchet
	Found  int    `json:"found"`  // by the vet
	// Findings are where the offences are, for a new one (Found >
	// Listed): every finding of the file, rule and what, for the vet
	// cannot tell which of them is the new one.
	Findings []Finding `json:"findings,omitempty"`
}

// Compare returns what rep found beyond the ratchet (new offences) and
// what the ratchet lists beyond rep (fixed offences still listed). The
// ratchet's entries are compared for the files rep vetted, and for files
// that are gone from rep.Dir; entries of other files are another vet's.
func (r *Ratchet) Compare(rep *Report) (added, fixed []Change) {
	listed := map[Offence]int{}
	for k, n := range r.merged() {
		if inScope(rep, k.File) {
			listed[k] = n
		}
	}
	found := map[Offence][]Finding{}
	for _, f := range rep.Findings {
		found[keyOf(f)] = append(found[keyOf(f)], f)
	}
	for k, fs := range found {
		if len(fs) > listed[k] {
			added = append(added, Change{File: k.File, Rule: k.Rule, What: k.What, Listed: listed[k], Found: len(fs), Findings: fs})
		}
	}
	for k, n := range listed {
		if len(found[k]) < n {
			fixed = append(fixed, Change{File: k.File, Rule: k.Rule, What: k.What, Listed: n, Found: len(found[k])})
		}
	}
	return sortedChanges(added), sortedChanges(fixed)
}

// Prune returns the ratchet with what rep no longer finds dropped: an
// entry's count goes down to what was found, and an entry found no more
// goes. It adds nothing; a new offence stays new.
func (r *Ratchet) Prune(rep *Report) *Ratchet {
	found := map[Offence]int{}
	for _, f := range rep.Findings {
		found[keyOf(f)]++
	}
	out := &Ratchet{Public: slices.Clone(r.Public)}
	for k, n := range r.merged() {
		if inScope(rep, k.File) {
			n = min(n, found[k])
		}
		if n > 0 {
			k.Count = n
			out.Offences = append(out.Offences, k)
		}
	}
	out.Offences = sorted(out.Offences)
	return out
}

// Record returns a ratchet that lists every offence rep found, with the
// entries of files rep did not vet kept: how a module adopts the vet, or
// accepts an offence on purpose (the diff shows it).
func (r *Ratchet) Record(rep *Report) *Ratchet {
	counts := map[Offence]int{}
	for k, n := range r.merged() {
		if !inScope(rep, k.File) {
			counts[k] = n
		}
	}
	for _, f := range rep.Findings {
		counts[keyOf(f)]++
	}
	out := &Ratchet{Public: slices.Clone(r.Public)}
	for k, n := range counts {
		k.Count = n
		out.Offences = append(out.Offences, k)
	}
	out.Offences = sorted(out.Offences)
	return out
}

// merged returns the ratchet's counts by file, rule and what (an Offence
// without its count), entries of the same key added up.
func (r *Ratchet) merged() map[Offence]int {
	m := map[Offence]int{}
	for _, o := range r.Offences {
		m[Offence{File: o.File, Rule: o.Rule, What: o.What}] += o.Count
	}
	return m
}

func keyOf(f Finding) Offence { return Offence{File: f.File, Rule: f.Rule, What: f.What} }

// inScope reports whether rep speaks for the ratchet entries of file: it
// vetted the file, or the file is gone.
func inScope(rep *Report, file string) bool {
	if slices.Contains(rep.Tests, file) {
		return true
	}
	_, err := os.Stat(filepath.Join(rep.Dir, filepath.FromSlash(path.Clean(file))))
	return errors.Is(err, os.ErrNotExist)
}

func sorted(list []Offence) []Offence {
	list = slices.Clone(list)
	slices.SortFunc(list, func(a, b Offence) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.What, b.What))
	})
	return list
}

func sortedChanges(cs []Change) []Change {
	slices.SortFunc(cs, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.What, b.What))
	})
	return cs
}
