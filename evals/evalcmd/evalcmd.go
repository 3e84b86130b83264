package evalcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
)

// Main is the command line of a program that runs evals (a user's
// cmd/evals): it runs Command with os.Args and exits with its code, 0
// when every attempt ran, 1 when the run stopped early or failed, 2 for
// a usage error, a bad cases file or a missing credential, 130 when
// interrupted.
func Main(es ...evals.Eval) {
	ctx, stop := cli.SignalContext()
	cmd := Command(es...)
	cmd.SetArgs(os.Args[1:])
	code := Execute(ctx, cmd, os.Stderr)
	stop()
	os.Exit(code)
}

// Execute runs cmd (from Command or CommandFrom) and returns its exit
// code, having said on stderr what went wrong.
func Execute(ctx context.Context, cmd *cobra.Command, stderr io.Writer) int {
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	// The catalog package's errors start with "catalog: " already.
	if msg, prefix := err.Error(), cmd.Name()+": "; strings.HasPrefix(msg, prefix) {
		fmt.Fprintln(stderr, msg)
	} else {
		fmt.Fprintf(stderr, "%s%s\n", prefix, msg)
	}
	if ctx.Err() != nil {
		return cli.ExitInterrupted
	}
	return cli.ExitCode(err)
}

// Command returns the command that runs evals: its flags are
// evals.Config's.
func Command(es ...evals.Eval) *cobra.Command {
	return CommandFrom(func(*cobra.Command) ([]evals.Eval, func() error, error) { return es, nil, nil })
}

// CommandFrom is Command with the evals made when the command runs, from
// its flags (catalogcmd adds --suite and --profile this way); done, if
// not nil, is called once the run is over.
func CommandFrom(load func(cmd *cobra.Command) (evals []evals.Eval, done func() error, err error)) *cobra.Command {
	var (
		cfg      evals.Config
		asJSON   bool
		list     bool
		variants []string
		shard    string
		merge    []string
	)
	cmd := &cobra.Command{
		Use:   "eval [EVAL...]",
		Short: "Run an agent over its eval cases with the real model, and score it",
		Long: `eval runs each eval's cases against a fresh app per attempt, with the real
model (the proxy passes model requests through, recording nothing), grades each
attempt from the end state the agent left behind, and writes under
OUT/<eval>/<variant>/: rows.jsonl (a row per case and repetition),
failures.jsonl (attempts with no score, and why), summary.json (each metric's
mean with a 95% interval over repetitions, counts, truncations, cost) and
traces/ (each attempt's report and transcript.html).

An answer that ended at a token limit is kept out of every mean and counted.
A model with no price has no cost, never zero. --max-cost-usd is a soft
ceiling: no new attempt starts once the cost so far reaches it, or once an
unpriced request makes it unable to hold; running attempts finish.

With no EVAL, every eval runs. Each attempt gets a database of its own on
--database-url, or on a private PostgreSQL started for the run.

Before a run starts anything, each eval's Preflight is asked about its first
case: a missing credential (an error that is evals.ErrMissingCredential) stops
the run there, with the variable it names: exit 2, nothing written.

Ctrl-C (SIGINT or SIGTERM) starts no new attempt and makes the running
attempts' proxies refuse every new model request, so that their turns end
at once; what ran is written to OUT/<eval>/<variant>.interrupted/, and the
last whole run's results stay as they were (exit 130). A second Ctrl-C quits
at once; the next run into OUT removes what it left.

--shard i/n runs the i-th of n equal parts of the attempts (every n-th
case and repetition of the plan, which every shard computes alike, with
all its variants), each on its own machine or CI job, with its share of
--max-cost-usd; --run-id names the run they share (default:
$AGENTVCR_RUN_ID), which a real sharded run needs. In a Kubernetes Indexed Job,
$JOB_COMPLETION_INDEX (from 0) and $JOB_COMPLETIONS stand for a missing
--shard. --merge DIR then puts the shards' results (each shard's OUT,
anywhere under DIR) together into OUT as one machine would have written
them, and refuses shards of two runs or definitions, a missing shard and a
shard there twice, naming them.

A run exits 0 when every attempt ran, whatever it scored; 1 when it stopped
early (the ceiling), an attempt could not run (setup_error or harness_error:
an app that did not start; unreachable: its model requests never reached
the provider, a name that did not resolve, a refused connection), the
database server could not be reached or the
results could not be written; 2 for a bad flag, a bad cases file or a missing
credential.

` + cli.ExitCodes,
		Example: `  eval --dry-run                      # the cases and attempts, calling nothing, writing nothing
  eval --reps 3 --concurrency 4       # every eval, three times over
  eval support --variant terse --reps 5 --max-cost-usd 2
  eval --cases 5 --json > summary.json
  eval --reps 5 --shard 2/3 --run-id "$CI_RUN" --out shard-2   # one of three machines
  eval --merge shards --out eval-results                     # after every shard: one report`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if len(merge) > 0 {
				if err := mergeOnly(cmd, args); err != nil {
					return err
				}
				cfg.Progress = cmd.ErrOrStderr()
				return usage(mergeCommand(cmd.Context(), cmd.OutOrStdout(), cfg, asJSON, merge))
			}
			if cfg.Reps < 1 || cfg.Concurrency < 1 || cfg.Timeout <= 0 {
				return cli.Usagef("--reps and --concurrency take 1 or more, --timeout a positive duration")
			}
			evals, done, err := load(cmd)
			if err != nil {
				return usage(err)
			}
			if done != nil {
				defer func() {
					if doneErr := done(); doneErr != nil && err == nil {
						err = doneErr
					}
				}()
			}
			chosen, err := choose(evals, args)
			if err != nil {
				return cli.UsageError{Err: err}
			}
			if list {
				return usage(printList(cmd.OutOrStdout(), chosen))
			}
			for _, v := range variants {
				for _, name := range strings.Split(v, ",") {
					if name = strings.TrimSpace(name); name != "" {
						cfg.Variants = append(cfg.Variants, name)
					}
				}
			}
			cfg.Progress = cmd.ErrOrStderr()
			if cfg.Shard, cfg.RunID, err = shardOf(shard, cfg.RunID); err != nil {
				return err
			}
			if cfg.Shard.Of > 0 && cfg.RunID == "" && !cfg.DryRun {
				return cli.Usagef("shard %s needs the id of the run its shards share, the same in each: --run-id ID or $AGENTVCR_RUN_ID (your CI's run id, say)", cfg.Shard)
			}
			return usage(runCommand(cmd.Context(), cmd.OutOrStdout(), cfg, asJSON, chosen))
		},
	}
	cmd.SetFlagErrorFunc(cli.FlagError)
	fl := cmd.Flags()
	fl.BoolVar(&cfg.DryRun, "dry-run", false, "resolve the cases and print the attempts; start no app, call no model, write nothing")
	fl.IntVar(&cfg.Reps, "reps", 1, "run each case `N` times")
	fl.StringArrayVar(&variants, "variant", nil, "also run the variant `NAME` on the same cases, and compare it with the baseline (repeatable)")
	fl.IntVar(&cfg.Cases, "cases", 0, "run a stable subset of `N` cases (0: all)")
	fl.IntVar(&cfg.Concurrency, "concurrency", 1, "run `N` attempts at once")
	fl.Float64Var(&cfg.MaxCostUSD, "max-cost-usd", 0, "start no new attempt once the run has cost `X` US dollars (0: no ceiling)")
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON on stdout")
	fl.StringVar(&cfg.Out, "out", "eval-results", "write the results under `DIR`")
	fl.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "fail an attempt whose agent is not idle within `D`")
	fl.StringVar(&cfg.DatabaseURL, "database-url", "", "make each attempt's database on this PostgreSQL `URL` (a user allowed to create databases); default: a private server for the run")
	fl.BoolVar(&list, "list", false, "list the evals, their cases, metrics and variants")
	fl.StringVar(&shard, "shard", "", "run the `i/n`-th part of the attempts (default: $JOB_COMPLETION_INDEX+1 of $JOB_COMPLETIONS when set)")
	fl.StringVar(&cfg.RunID, "run-id", "", "name the run the shards share, the same in each shard (default: $AGENTVCR_RUN_ID)")
	fl.StringArrayVar(&merge, "merge", nil, "merge the shards' results under `DIR` into --out, running nothing (repeatable)")
	return cmd
}

// shardOf is the shard --shard names, or the one a Kubernetes Indexed
// Job's environment does, and the run id.
func shardOf(flag, runID string) (evals.Shard, string, error) {
	if runID == "" {
		runID = os.Getenv("AGENTVCR_RUN_ID")
	}
	if flag != "" {
		s, err := evals.ParseShard(flag)
		if err != nil {
			return evals.Shard{}, "", cli.Usagef("--shard: %v", err)
		}
		return s, runID, nil
	}
	index, n := os.Getenv("JOB_COMPLETION_INDEX"), os.Getenv("JOB_COMPLETIONS")
	switch {
	case index == "" && n == "":
		return evals.Shard{}, runID, nil
	case index == "" || n == "":
		// One without the other would run every attempt on every pod.
		return evals.Shard{}, "", cli.Usagef("$JOB_COMPLETION_INDEX is %q and $JOB_COMPLETIONS %q: set both (an Indexed Job sets the index; set JOB_COMPLETIONS to its completions), or pass --shard i/n", index, n)
	}
	i, err1 := strconv.Atoi(index)
	of, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || of < 1 || i < 0 || i >= of {
		return evals.Shard{}, "", cli.Usagef("$JOB_COMPLETION_INDEX %q of $JOB_COMPLETIONS %q: want an index from 0 to completions - 1", index, n)
	}
	return evals.Shard{Index: i + 1, Of: of}, runID, nil
}

// mergeOnly refuses, beside --merge, what says what to run: the shards
// ran that already.
func mergeOnly(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("--merge takes no eval name (got %q): it merges every eval the shards ran", args[0])
	}
	var other string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if other == "" && !slices.Contains([]string{"merge", "out", "json"}, f.Name) {
			other = f.Name
		}
	})
	if other != "" {
		return cli.Usagef("--merge takes no --%s, only --out and --json: the shards ran as they were told", other)
	}
	return nil
}

func mergeCommand(ctx context.Context, stdout io.Writer, cfg evals.Config, asJSON bool, dirs []string) error {
	rep, err := evals.Merge(ctx, cfg, dirs...)
	if err != nil {
		return err
	}
	if err := printReport(stdout, rep, asJSON); err != nil {
		return err
	}
	if rep.Stopped != "" {
		return fmt.Errorf("stopped: %s; %d attempts were not started", rep.Stopped, notStarted(rep))
	}
	return nil
}

func printReport(w io.Writer, rep *evals.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.WriteText(w)
	return nil
}

// usage makes a *evals.ConfigError and a missing credential usage
// errors: exit code 2.
func usage(err error) error {
	if _, ok := errors.AsType[*evals.ConfigError](err); ok || errors.Is(err, evals.ErrMissingCredential) {
		return cli.UsageError{Err: err}
	}
	return err
}

// choose returns the evals named, in the order declared, or all.
func choose(es []evals.Eval, names []string) ([]evals.Eval, error) {
	if len(names) == 0 {
		return es, nil
	}
	var out []evals.Eval
	for _, n := range names {
		if slices.ContainsFunc(out, func(e evals.Eval) bool { return e.Name == n }) {
			continue // named twice: run once
		}
		i := slices.IndexFunc(es, func(e evals.Eval) bool { return e.Name == n })
		if i < 0 {
			var have []string
			for _, e := range es {
				have = append(have, e.Name)
			}
			return nil, fmt.Errorf("no eval %q (have: %s)", n, strings.Join(have, ", "))
		}
		out = append(out, es[i])
	}
	return out, nil
}

func printList(w io.Writer, es []evals.Eval) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EVAL\tCASES\tMETRICS\tVARIANTS")
	for _, e := range es {
		n := "?"
		if e.Cases != nil {
			cases, err := e.Cases()
			if err != nil {
				return &evals.ConfigError{Err: fmt.Errorf("eval %s: %w", e.Name, err)}
			}
			n = fmt.Sprint(len(cases))
		}
		var ms, vs []string
		for _, m := range e.AllMetrics() {
			ms = append(ms, m.ID+" ("+string(m.Kind)+")")
		}
		for _, v := range e.Variants {
			vs = append(vs, v.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, n, strings.Join(ms, ", "), strings.Join(vs, ", "))
	}
	return tw.Flush()
}

func runCommand(ctx context.Context, stdout io.Writer, cfg evals.Config, asJSON bool, es []evals.Eval) (err error) {
	if !cfg.DryRun {
		// Validate (a dry run does only that), ask for the credentials,
		// and see that the results can be written, before starting
		// anything.
		dry := cfg
		dry.DryRun = true
		if _, err := evals.Run(ctx, dry, es...); err != nil {
			return err
		}
		if err := preflight(ctx, es); err != nil {
			return err
		}
	}
	if !cfg.DryRun && cfg.DatabaseURL == "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return fmt.Errorf("the results directory: %w", err)
		}
		probe, err := os.CreateTemp(cfg.Out, ".evals-write-")
		if err != nil {
			return fmt.Errorf("the results directory: %w", err)
		}
		probe.Close()
		os.Remove(probe.Name())
		cluster, err := pgcluster.Start(ctx)
		if err != nil {
			return fmt.Errorf("a PostgreSQL for the attempts' databases: %w (or set --database-url)", err)
		}
		defer func() {
			if stopErr := cluster.Stop(); stopErr != nil && err == nil {
				err = stopErr
			}
		}()
		cfg.DatabaseURL = cluster.URL("postgres")
	}
	rep, err := evals.Run(ctx, cfg, es...)
	if err != nil {
		return err
	}
	if err := printReport(stdout, rep, asJSON); err != nil {
		return err
	}
	broken := 0
	for _, s := range rep.Runs {
		broken += s.Excluded[evals.SetupError] + s.Excluded[evals.HarnessError] + s.Excluded[evals.Unreachable]
	}
	switch {
	case rep.Stopped == "interrupted":
		return fmt.Errorf("%w: %d attempts were not started and %d were cut short; the results of those that ran are written", cli.ErrInterrupted, notStarted(rep), cutShort(rep))
	case rep.Stopped != "":
		return fmt.Errorf("stopped: %s; %d attempts were not started", rep.Stopped, notStarted(rep))
	case broken > 0:
		return fmt.Errorf("%d attempts could not run (setup_error, harness_error or unreachable: failures.jsonl says why)", broken)
	}
	return nil
}

// preflight asks each eval's Preflight about its first case, and
// returns the first missing credential it reports: the run would fail
// every attempt on it. Other errors are the attempts' to report.
func preflight(ctx context.Context, es []evals.Eval) error {
	for _, e := range es {
		if e.Preflight == nil {
			continue
		}
		cases, err := e.Cases()
		if err != nil || len(cases) == 0 {
			continue // the dry run said so already
		}
		if err := e.Preflight(ctx, cases[0]); errors.Is(err, evals.ErrMissingCredential) {
			return fmt.Errorf("eval %s: %w", e.Name, err)
		}
	}
	return nil
}

// cutShort counts the attempts an interruption ended.
func cutShort(rep *evals.Report) int {
	n := 0
	for _, s := range rep.Runs {
		n += s.Excluded[evals.Interrupted]
	}
	return n
}

func notStarted(rep *evals.Report) int {
	n := 0
	for _, s := range rep.Runs {
		n += s.Attempts - s.Started
	}
	return n
}
