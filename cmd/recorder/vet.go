package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/vet"
)

// errVetFailed is returned when vet found new offences or fixed ones
// still listed; they are printed already.
var errVetFailed = errors.New("vet failed")

func newVetCmd(e *env) *cobra.Command {
	var (
		ratchet      string
		asJSON       bool
		prune, write bool
	)
	cmd := &cobra.Command{
		Use:   "vet [flags] [PACKAGES]",
		Short: "Check that agent tests drive the app from outside, against a ratchet of today's offences",
		Long: `vet checks the agent tests of the packages named (go command patterns; "."
by default): the _test.go files of each package whose tests import
agentvcr's fixture. Three rules hold for them (docs/vet.md):

  imports      the fixture, agentvcr's packages for tests, the standard
               library, test libraries and the app's packages declared
               public; no other package of the app's module
  model-fakes  no model of the test's own: the fixture's scripted model
               or recordings
  internals    no SQL against the app's database, no calls into the
               app's runtime packages

The ratchet, agentvcr-vet.json at the module's root (or --ratchet),
declares the app's public packages ("public": its test support) and lists
today's offences by file, rule and what, which may only get shorter. vet
fails (exit 1) on an offence the ratchet does not list, and on a listed
one that was fixed: --prune drops those from the ratchet and adds
nothing. --write records every offence found: to adopt vet, or to accept
one on purpose, where review sees the diff.

It prints each new offence as file:line:column: rule: message, the file
relative to the module's root, and each fixed one; with --json, one JSON
object per problem. A summary goes to standard error. The packages must
build.`,
		Example: `  recorder vet ./...
  recorder vet --prune ./...        # after fixing an offence
  recorder vet --json ./examples/agent/...
  recorder vet --write ./...        # adopt vet: record today's offences`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if prune && write {
				return cli.Usagef("--prune and --write do not go together: --prune only drops fixed offences, --write records every offence")
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			path := ratchet
			if path == "" {
				var err error
				if path, err = vet.RatchetPath("."); err != nil {
					return cli.UsageError{Err: err}
				}
			}
			shown := path // in messages: from the working directory, when below it
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
					shown = rel
				}
			}
			r, err := vet.ReadRatchet(path)
			missing := errors.Is(err, fs.ErrNotExist)
			switch {
			case missing:
				r = &vet.Ratchet{}
			case err != nil:
				return cli.UsageError{Err: err}
			}
			rep, err := vet.Run(cmd.Context(), ".", r.Public, args...)
			if errors.Is(err, vet.ErrNoPackages) {
				return cli.UsageError{Err: err}
			}
			if err != nil {
				return err
			}
			if write {
				out := r.Record(rep)
				if err := out.WriteFile(path); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "vetted %d agent tests: wrote %d offences to %s\n", len(rep.AgentTests), count(out), shown)
				return nil
			}
			added, fixed := r.Compare(rep)
			pruned := 0
			if prune && len(fixed) > 0 {
				if err := r.Prune(rep).WriteFile(path); err != nil {
					return err
				}
				pruned, fixed = len(fixed), nil
			}
			enc := json.NewEncoder(e.stdout)
			type line struct {
				vet.Finding
				note string
			}
			var lines []line // the new offences, in the order of the files' lines
			for _, c := range added {
				if asJSON {
					enc.Encode(problem{"new", c})
					continue
				}
				note := "(new)"
				if c.Listed > 0 {
					note = fmt.Sprintf("(new: found %d, the ratchet lists %d)", c.Found, c.Listed)
				}
				for _, f := range c.Findings {
					lines = append(lines, line{f, note})
				}
			}
			slices.SortFunc(lines, func(a, b line) int {
				return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
			})
			for _, l := range lines {
				fmt.Fprintln(e.stdout, l.Finding, l.note)
			}
			for _, c := range fixed {
				if asJSON {
					enc.Encode(problem{"fixed", c})
					continue
				}
				fmt.Fprintf(e.stdout, "%s: %s %s: fixed, still listed (the ratchet lists %d, found %d): recorder vet --prune drops it\n",
					c.File, c.Rule, c.What, c.Listed, c.Found)
			}
			summary := fmt.Sprintf("vetted %d agent tests: %d offences", len(rep.AgentTests), len(rep.Findings))
			if pruned > 0 {
				summary += fmt.Sprintf("; pruned %d fixed from %s", pruned, shown)
			}
			if missing {
				summary += fmt.Sprintf("; no ratchet at %s (recorder vet --write records today's offences)", shown)
			}
			fmt.Fprintln(e.stderr, summary)
			if len(added) > 0 || len(fixed) > 0 {
				more, fewer := 0, 0
				for _, c := range added {
					more += c.Found - c.Listed
				}
				for _, c := range fixed {
					fewer += c.Listed - c.Found
				}
				return fmt.Errorf("%w: %d new offences, %d fixed offences still listed in %s", errVetFailed, more, fewer, shown)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&ratchet, "ratchet", "", "the ratchet file (default agentvcr-vet.json at the module's root)")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object per new or fixed offence")
	fl.BoolVar(&prune, "prune", false, "drop fixed offences from the ratchet (adds nothing)")
	fl.BoolVar(&write, "write", false, "record every offence found in the ratchet")
	return cmd
}

// problem is a new or fixed offence, as --json prints it.
type problem struct {
	Problem string `json:"problem"` // "new" or "fixed"
	vet.Change
}

// count is how many offences r lists.
func count(r *vet.Ratchet) int {
	n := 0
	for _, o := range r.Offences {
		n += o.Count
	}
	return n
}
