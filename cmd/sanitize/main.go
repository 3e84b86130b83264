// Command sanitize removes people, workspaces and secrets from recorded
// history so it can go into git, and checks files already there.
//
// Exit codes (internal/cli's table): 0 success, 1 refused (something would
// leak, or the input was sanitized already) or check failed, 2 usage or bad
// input, 130 interrupted.
package main

//go:generate go test -run TestTheCLIReferenceIsCurrent -update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/cliflags"
	"github.com/agentvcr/agentvcr/internal/version"
	"github.com/agentvcr/agentvcr/sanitize"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	root := newRoot(stdin, stdout, stderr, getenv)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "sanitize: %v\n", err)
	return cli.ExitCode(err)
}

// newRoot is sanitize's command, with check.
func newRoot(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	var (
		flags       cliflags.Sanitize
		output      string
		report      string
		people      string
		skipRefused bool
	)
	root := &cobra.Command{
		Use:   "sanitize [flags] [IN | -]",
		Short: "Remove people, workspaces and secrets from recorded history",
		Long: `sanitize replaces every personal value and secret in recorded-history JSON
and writes the result, stamped, for git. It refuses to write anything when it
cannot prove it succeeded: after rewriting, it scans its own output for every
original value it learned and every secret shape, and on any hit exits 1 and
reports where (row seq and JSON path), never the value.

Fakes derive from a key (--key-file or $AGENTVCR_SANITIZE_KEY): the same key
gives the same fakes in every file and run. Without a key a random one is
used, and the fakes agree only within the run.

IN is a file, a directory (every *.json in it, with -o naming the output
directory), or - for standard input (the default); output goes to -o or
standard output. In a directory, every file is learned before any is
written, and nothing is written unless every file passes.

--people FILE (written by recorder export --people) adds every person of the
database, so that a person named in a conversation they took no part in is
found too. A refused file is named with the row seq, the JSON path and why,
never the value; --skip-refused writes the files that passed, and still
exits 1.

Names in free text are found too: a pair of capitalised words whose first is
a given name of some locale ("ask Imogen Hale"), and the name an address's
local part spells (imogen.hale@corp.io), then replaced wherever they stand
in every file of the run. --no-detect-names turns the detector off; a rules
file's "notNames" keeps product phrases it would take for names ("Chat
Completions").

Known limit: a name of words in no name list and no dictionary, with no
word such as "ask" or "cc" before it, is not found.

` + cli.ExitCodes + `
A refusal (something would leak, or the input was sanitized already) and a
check that found a problem exit 1.`,
		Example: `  sanitize --key-file ~/.config/agentvcr/sanitize.key -o recordings/launch.json export.json
  recorder export --conversation local:web:4f1c | sanitize > launch.json
  sanitize --key-file k --report report.json -o recordings/ exports/
  recorder export --people ~/.config/agentvcr/people.json && sanitize --people ~/.config/agentvcr/people.json -o recordings/ exports/
  sanitize check recordings/`,
		Version:       version.String(),
		Args:          cli.Args(cobra.MaximumNArgs(1)),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := flags.Options(getenv)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			opts.ReportPaths = report != ""
			if people != "" {
				if opts.People, err = readPeople(people); err != nil {
					return cli.UsageError{Err: err}
				}
			}
			s, err := sanitize.New(opts)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			if s.RandomKey() {
				fmt.Fprintf(stderr, "sanitize: no key given (--key-file or $%s): using a random key; fakes agree within this run only\n", cliflags.KeyEnv)
			}
			in := "-"
			if len(args) == 1 {
				in = args[0]
			}
			if info, statErr := os.Stat(in); statErr == nil && info.IsDir() {
				err = sanitizeDir(cmd.Context(), s, in, output, skipRefused, stderr)
			} else {
				err = sanitizeFile(s, in, output, stdin, stdout)
			}
			// With --skip-refused the files that passed were written:
			// their report too.
			if err != nil && !(skipRefused && errors.Is(err, sanitize.ErrRefused)) {
				return err
			}
			if report != "" {
				if rerr := atomicfile.Write(report, 0o644, func(w io.Writer) error {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					return enc.Encode(s.Report())
				}); rerr != nil {
					return rerr
				}
			}
			return err
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(cli.FlagError)
	flags.Register(root.Flags())
	root.Flags().StringVarP(&output, "output", "o", "", "output file, or directory for a directory IN (default standard output)")
	root.Flags().StringVar(&report, "report", "", "write a JSON report (counts only, no original values) to this file")
	root.Flags().StringVar(&people, "people", "", "learn every person in this people file (recorder export --people)")
	root.Flags().BoolVar(&skipRefused, "skip-refused", false, "for a directory: write the files that pass, skip the refused ones, exit 1")
	root.AddCommand(newCheckCmd(stdout, stderr))
	return root
}

func sanitizeFile(s *sanitize.Sanitizer, in, out string, stdin io.Reader, stdout io.Writer) error {
	var (
		doc  []byte
		err  error
		name = in
	)
	if in == "-" {
		name = "<stdin>"
		doc, err = io.ReadAll(stdin)
	} else {
		doc, err = os.ReadFile(in)
	}
	if err != nil {
		return badInput(err)
	}
	clean, err := s.Sanitize(doc, name)
	if err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err = stdout.Write(clean)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error {
		_, err := w.Write(clean)
		return err
	})
}

// badInput makes a file that is missing, or a directory where a file
// belongs, bad input (exit 2).
func badInput(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		return cli.UsageError{Err: err}
	}
	return err
}

// readPeople reads a people file.
func readPeople(name string) (*sanitize.People, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--people: %w", err)
	}
	defer f.Close()
	return sanitize.ReadPeople(f, name)
}

// sanitizeDir runs s.Dir and names each refused file on stderr.
func sanitizeDir(ctx context.Context, s *sanitize.Sanitizer, in, out string, skip bool, stderr io.Writer) error {
	if out == "" || out == "-" {
		return cli.Usagef("a directory IN needs -o DIR")
	}
	rep, err := s.Dir(ctx, in, out, sanitize.DirOptions{SkipRefused: skip})
	for _, r := range rep.Refused {
		fmt.Fprintf(stderr, "sanitize: %v\n", r)
	}
	switch {
	case errors.Is(err, sanitize.ErrNoFiles):
		return cli.UsageError{Err: err}
	case errors.Is(err, sanitize.ErrRefused) && !skip:
		return fmt.Errorf("%w (--skip-refused writes the others)", err)
	}
	return badInput(err)
}
