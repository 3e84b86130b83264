package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentcatalog"
	"github.com/agentvcr/agentvcr/examples/agent/agentevals"
	"github.com/agentvcr/agentvcr/internal/cli"
)

// newEvalCmd runs the reference agent's evals (examples/agent) with the
// real model: its eval, or the cells of its catalog that --suite,
// --profile and --environment select.
func newEvalCmd(e *env) *cobra.Command {
	key := e.getenv("AI_GATEWAY_API_KEY")
	var suite, profile, environment string
	cmd := evals.CommandFrom(func(cmd *cobra.Command) ([]evals.Eval, func() error, error) {
		if suite == "" && profile == "" && environment == "" {
			return []evals.Eval{agentevals.Answers(key)}, nil, nil
		}
		return catalogEvals(cmd, e, suite, profile, environment)
	})
	cmd.Short = "Run the reference agent's evals with the real model, and score it"
	cmd.Long += `

recorder eval runs the reference agent's (examples/agent) evals: "answers",
ten questions with one right answer each, with a variant "haiku" that runs
the agent loop on the fast model. With --suite, --profile or --environment
it runs the cells of the agent's test catalog they select instead (recorder
catalog --list lists them), one eval per suite, profile and environment,
each graded by its cases' matchers; a cell whose credential is missing
fails, it is never skipped. The agent calls the model through the AI gateway
with $AI_GATEWAY_API_KEY, which --dry-run and --list do not need. A program
of your own runs its evals the same way with evals.Main.`
	cmd.Example = `  recorder eval --dry-run
  recorder eval --list
  AI_GATEWAY_API_KEY=... recorder eval --reps 3 --concurrency 4 --max-cost-usd 1
  AI_GATEWAY_API_KEY=... recorder eval answers --variant haiku --reps 3 --json > report.json
  AI_GATEWAY_API_KEY=... recorder eval --suite threads --profile sonnet --reps 2`
	cmd.Flags().StringVar(&suite, "suite", "", "run the catalog's cells of suite `S`")
	cmd.Flags().StringVar(&profile, "profile", "", "run the catalog's cells of profile `P`")
	cmd.Flags().StringVar(&environment, "environment", "", "run the catalog's cells in environment `E`")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		dry, _ := cmd.Flags().GetBool("dry-run")
		list, _ := cmd.Flags().GetBool("list")
		catalogRun := suite != "" || profile != "" || environment != ""
		// The catalog's cells resolve the key themselves, and fail
		// without it, each; the eval needs it up front.
		if key == "" && !dry && !list && !catalogRun {
			return cli.Usagef("AI_GATEWAY_API_KEY is not set: the agent calls the real model through the AI gateway (--dry-run needs none)")
		}
		return nil
	}
	return cmd
}

// catalogEvals plans the catalog's cells that suite, profile and
// environment select; for a run (not a dry run or a list), it sets their
// environments up first, and the returned func cleans them up.
func catalogEvals(cmd *cobra.Command, e *env, suite, profile, environment string) ([]evals.Eval, func() error, error) {
	root, err := agentcatalog.Root()
	if err != nil {
		return nil, nil, err
	}
	cat := agentcatalog.New(root)
	cells, err := cat.Select(suite, profile, environment)
	if err != nil {
		// An invalid catalog, or a selection of nothing: bad input.
		return nil, nil, cli.UsageError{Err: err}
	}
	ctx := cmd.Context()
	plan := cat.NewPlan(cells, catalog.EnvResolver(e.getenv))
	dry, _ := cmd.Flags().GetBool("dry-run")
	list, _ := cmd.Flags().GetBool("list")
	var done func() error
	if !dry && !list {
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
