package vet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// ErrLoad is the error of Run when the packages could not be loaded or
// type-checked: a vet of code that does not build would say nothing.
var ErrLoad = errors.New("the packages did not load")

// ErrNoPackages is the error of Run when a pattern names no package.
var ErrNoPackages = errors.New("no package matches")

// Finding is one offence of an agent test.
type Finding struct {
	Rule    string `json:"rule"`    // RuleImports, RuleModelFakes or RuleInternals
	File    string `json:"file"`    // slash-separated, relative to the module's root (Report.Dir)
	Line    int    `json:"line"`    // from 1
	Column  int    `json:"column"`  // from 1, in bytes
	What    string `json:"what"`    // the import path or the function the offence is about
	Message string `json:"message"` // what is wrong, and what to use instead
}

// String is the finding as go vet prints one: file:line:column: rule: message.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", f.File, f.Line, f.Column, f.Rule, f.Message)
}

// Report is what Run found.
type Report struct {
	// Dir is the root of the module Run was called in; the paths below
	// are relative to it.
	Dir string
	// Findings are the agent tests' offences, by file and position.
	Findings []Finding
	// Tests are the _test.go files of the packages vetted: the files a
	// ratchet is compared on.
	Tests []string
	// AgentTests are those of Tests that are agent tests.
	AgentTests []string
}

// Run loads the packages that patterns name in dir, with their tests, as
// go vet does (a pattern of the go command: ./..., an import path), and
// runs NewAnalyzer(public...) on them. The packages must build; a
// package that does not is an error that wraps ErrLoad.
func Run(ctx context.Context, dir string, public []string, patterns ...string) (*Report, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return nil, err
	}
	cfg := &packages.Config{Context: ctx, Dir: dir, Tests: true, Mode: packages.LoadSyntax | packages.NeedModule}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLoad, err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoPackages, strings.Join(patterns, " "))
	}
	// Only the packages with test files: a test variant holds them.
	var tested []*packages.Package
	var problems, missing []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if len(p.GoFiles) == 0 {
				// A pattern that names no package: a directory that
				// is not there, say.
				missing = append(missing, e.Msg)
			} else if !slices.Contains(problems, e.Error()) { // the same in each of a package's variants
				problems = append(problems, e.Error())
			}
		}
		if slices.ContainsFunc(p.GoFiles, isTest) {
			tested = append(tested, p)
		}
	}
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("%w: %s", ErrNoPackages, strings.Join(missing, "; "))
	case len(problems) > 0:
		return nil, fmt.Errorf("%w: %s", ErrLoad, strings.Join(problems, "; "))
	}
	a := NewAnalyzer(public...)
	graph, err := checker.Analyze([]*analysis.Analyzer{a}, tested, nil)
	if err != nil {
		return nil, err
	}
	rel := func(name string) string {
		if r, err := filepath.Rel(root, name); err == nil {
			return filepath.ToSlash(r)
		}
		return filepath.ToSlash(name)
	}
	rep := &Report{Dir: root}
	for _, p := range tested {
		for _, f := range p.GoFiles {
			if isTest(f) {
				rep.Tests = append(rep.Tests, rel(f))
			}
		}
	}
	for act := range graph.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			return nil, fmt.Errorf("vet %s: %w", act.Package.PkgPath, act.Err)
		}
		res := act.Result.(*result)
		for _, f := range res.agentTests {
			rep.AgentTests = append(rep.AgentTests, rel(f))
		}
		for _, fd := range res.found {
			pos := act.Package.Fset.PositionFor(fd.pos, false)
			rep.Findings = append(rep.Findings, Finding{Rule: fd.rule, File: rel(pos.Filename), Line: pos.Line, Column: pos.Column, What: fd.what, Message: fd.message})
		}
	}
	slices.Sort(rep.Tests)
	slices.Sort(rep.AgentTests)
	slices.SortFunc(rep.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Rule, b.Rule))
	})
	return rep, nil
}

func isTest(name string) bool { return strings.HasSuffix(name, "_test.go") }

// moduleRoot returns the directory of the go.mod at or above dir.
func moduleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is in no Go module (no go.mod at or above it)", abs)
		}
	}
}
