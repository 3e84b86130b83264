package catalogcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/internal/cli"
)

// Main is the command line of a program that declares cat: it runs
// Command with os.Args, credentials resolved from the environment
// (catalog.EnvResolver), and exits with its code.
func Main(cat *catalog.Catalog) {
	ctx, stop := cli.SignalContext()
	cmd := Command(cat, catalog.EnvResolver(os.Getenv))
	cmd.SetArgs(os.Args[1:])
	code := evalcmd.Execute(ctx, cmd, os.Stderr)
	stop()
	os.Exit(code)
}

// Command returns the catalog's command: evalcmd's, whose evals are the
// cells --suite, --profile and --environment select (all of them when
// none is given), and whose --list lists the catalog. resolve finds the
// cells' credentials.
func Command(cat *catalog.Catalog, resolve catalog.Resolver) *cobra.Command {
	var suite, profile, environment, sources string
	cmd := evalcmd.CommandFrom(func(cmd *cobra.Command) ([]evals.Eval, func() error, error) {
		c, err := withSources(cat, sources)
		if err != nil {
			return nil, nil, err
		}
		es, done, err := cellEvals(cmd, c, resolve, suite, profile, environment)
		return es, done, sourcesHint(err, cat, sources)
	})
	cmd.Use = "catalog [flags]"
	cmd.Short = "List a test catalog's suites and cells, and run the cells as evals"
	cmd.Long = `catalog validates the test catalog and, with --list, lists each suite, by
rank, with its tier, its size, its fingerprint (a digest of its definition and
of the source files it names: it changes with anything the suite measures) and
the ids of its cells, <suite>.<profile>.<environment>.<case>.

Without --list it runs the cells that --suite, --profile and --environment
select (every cell when none is given) as evals with the real model, one eval
per suite, profile and environment, each graded by its cases' matchers: the
flags below are those of an eval program (--dry-run, --reps, --out...). A
cell whose credential is missing is said before anything is set up (exit 2,
naming the variable); it is never skipped.

A catalog that is not valid (a suite whose size differs from the one it
declares, a credential that is not a secret_ref, a field that looks like a
secret) is refused with every problem, naming the suite and the field: exit 2.
The suites' source files are read under --sources (default: the working
directory), unless the program embeds them.

` + cli.ExitCodes
	cmd.Example = `  catalog --list
  catalog --list --json | jq '.[].fingerprint'
  catalog --suite answers --profile haiku --dry-run
  catalog --suite answers --profile haiku --reps 3 --out results`
	cmd.Flags().StringVar(&suite, "suite", "", "run the cells of suite `S`")
	cmd.Flags().StringVar(&profile, "profile", "", "run the cells of profile `P`")
	cmd.Flags().StringVar(&environment, "environment", "", "run the cells in environment `E`")
	cmd.Flags().StringVar(&sources, "sources", ".", "read the suites' source files under `DIR` (when the catalog embeds none)")
	cmd.Flags().Lookup("list").Usage = "list the suites, their fingerprints and cells"
	cmd.Flags().Lookup("json").Usage = "print the listing (--list) or the report as JSON on stdout"
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if list, _ := cmd.Flags().GetBool("list"); !list {
			return run(cmd, args)
		}
		if len(args) > 0 {
			return cli.Usagef("--list takes no argument (got %q)", args[0])
		}
		c, err := withSources(cat, sources)
		if err != nil {
			return err
		}
		asJSON, _ := cmd.Flags().GetBool("json")
		return sourcesHint(printList(cmd.OutOrStdout(), c, asJSON), cat, sources)
	}
	return cmd
}

// withSources is cat, its Sources read under dir if it has none.
func withSources(cat *catalog.Catalog, dir string) (*catalog.Catalog, error) {
	if cat.Sources != nil {
		return cat, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, cli.Usagef("--sources %s: not a directory: run the catalog from its module's root, or say where its sources are", dir)
	}
	c := *cat
	c.Sources = os.DirFS(dir)
	return &c, nil
}

// sourcesHint says, of a catalog whose suites' source files are read
// under dir (relative to the working directory unless it is absolute),
// how to point at them when one names no file there.
func sourcesHint(err error, cat *catalog.Catalog, dir string) error {
	if err == nil || cat.Sources != nil {
		return err
	}
	cerr, ok := errors.AsType[*catalog.Error](err)
	if !ok || !slices.ContainsFunc(cerr.Problems, func(p catalog.Problem) bool { return p.Field == "sources" }) {
		return err
	}
	return fmt.Errorf("%w (the source files are read under --sources %s, from the working directory: run the program from its module's root, or pass --sources DIR)", err, dir)
}

func printList(w io.Writer, cat *catalog.Catalog, asJSON bool) error {
	list, err := cat.List()
	if err != nil {
		return catalogError(err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	for _, l := range list {
		fmt.Fprintf(w, "%s (%s, rank %d): %d cells, fingerprint %s\n", l.ID, l.Tier, l.Rank, l.Size, l.Fingerprint)
		for _, c := range l.Cells {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	return nil
}

// cellEvals plans the cells that suite, profile and environment select;
// for a run (not a dry run), it checks their credentials and sets their
// environments up first, and the returned func cleans them up.
func cellEvals(cmd *cobra.Command, cat *catalog.Catalog, resolve catalog.Resolver, suite, profile, environment string) ([]evals.Eval, func() error, error) {
	cells, err := cat.Select(suite, profile, environment)
	if err != nil {
		// An invalid catalog, or a selection of nothing: bad input.
		return nil, nil, cli.UsageError{Err: err}
	}
	ctx := cmd.Context()
	plan := cat.NewPlan(cells, resolve)
	var done func() error
	if dry, _ := cmd.Flags().GetBool("dry-run"); !dry {
		if err := plan.Check(ctx); err != nil {
			return nil, nil, cli.UsageError{Err: err}
		}
		plan.Setup(ctx)
		done = func() error { return plan.Cleanup(context.WithoutCancel(ctx)) }
	}
	es, err := plan.Evals(ctx)
	if err != nil {
		if done != nil {
			done()
		}
		return nil, nil, err
	}
	return es, done, nil
}

// catalogError makes an invalid catalog a usage error: exit 2.
func catalogError(err error) error {
	if _, ok := errors.AsType[*catalog.Error](err); ok {
		return cli.UsageError{Err: err}
	}
	return err
}
