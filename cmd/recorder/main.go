// Command recorder exports conversations from a product's PostgreSQL
// database as recorded history, loads recorded history into a test
// database, prints or applies the product schema, runs the recording proxy
// (with its CA and environment), renders and prunes recordings, builds and
// runs a user's evals and catalog programs, runs a demo on a throwaway
// PostgreSQL, vets agent tests, and serves the test fixture to other
// languages.
//
// Exit codes (internal/cli's table): 0 success, 1 the operation failed, 2
// usage or bad input, 130 interrupted (SIGINT or SIGTERM).
package main

//go:generate go test -run TestTheCLIReferenceIsCurrent -update

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/version"
)

func main() {
	ctx, stop := cli.SignalContext()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is what a command reads and writes besides its flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(&env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv})
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if errors.As(err, new(cli.Reported)) {
		return cli.ExitCode(err)
	}
	if ctx.Err() != nil {
		// A signal. A command that knows what it left undone says so;
		// an error that is only the cancellation is not news.
		switch {
		case errors.Is(err, cli.ErrInterrupted):
			fmt.Fprintf(stderr, "recorder: %v\n", err)
		case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.Cause(ctx)):
			fmt.Fprintf(stderr, "recorder: %v\n", err)
			fallthrough
		default:
			fmt.Fprintln(stderr, "recorder: interrupted")
		}
		return cli.ExitInterrupted
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "recorder: %v\n", err)
	return cli.ExitCode(err)
}

// newRoot is recorder's command, with every subcommand.
func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "recorder",
		Short: "Record, replay, load and evaluate an AI agent's conversations for tests",
		Long: `recorder is agentvcr's tool for testing an AI agent:

  Conversations   export moves an agent's conversations out of its
                  PostgreSQL database as recorded-history JSON (the format
                  of getsentry/junior's recordings), load writes them into a
                  test database, schema prints or applies the product's
                  schema: tests start from a real conversation.
  Traffic         proxy records and replays the agent's HTTPS traffic (model
                  and Slack calls) through cassettes; ca prints the proxy's
                  certificate authority, env the environment a process needs
                  to go through the proxy.
  Recordings      view renders a recorded-history file as an HTML
                  transcript; prune deletes the recordings no run used;
                  demo exports and loads a sample conversation on a
                  throwaway PostgreSQL.
  Evals           eval and catalog build and run your evals program
                  (evals/evalcmd) and your test catalog's program
                  (catalog/catalogcmd), with their arguments.
  Tests           vet checks that your agent tests drive the app from
                  outside, against a ratchet of today's offences; fixture
                  serve hosts the Go test fixture over loopback HTTP, for
                  tests in other languages (the npm package's fixture()).

Start with "recorder demo": it cleans up after itself.

` + cli.ExitCodes,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(cli.FlagError)
	root.AddCommand(newSchemaCmd(e), newExportCmd(e), newLoadCmd(e), newDemoCmd(e), newCACmd(e), newProxyCmd(e), newEnvCmd(e), newPruneCmd(e), newViewCmd(e), newEvalCmd(e), newCatalogCmd(e), newVetCmd(e), newFixtureCmd(e))
	return root
}
