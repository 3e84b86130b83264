package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
)

// newEvalCmd runs a user's evals program (evals/evalcmd).
func newEvalCmd(e *env) *cobra.Command {
	cmd := newProgramCmd(e, "eval", "evals")
	cmd.Short = "Build and run your evals program (evals/evalcmd) with its arguments"
	cmd.Long = `eval runs your evals: a Go program whose main calls evalcmd.Main with its
evals (package github.com/agentvcr/agentvcr/evals/evalcmd). PKG is its
package, which eval builds with "go build" into a temporary directory (the
build's output is shown if it fails), or BINARY a program already built.
Every argument after it is the program's: --list, --dry-run, --reps,
--variant, --max-cost-usd, --json... ("recorder eval PKG --help" lists them).

The program runs in the working directory (recorder does not change it),
where it reads the cases files its evals name by a relative path: run it
from your module's root. It gets recorder's standard input and output and
its signals (an evals program stops gracefully on a first Ctrl-C, at once
on a second): on a terminal it reads the terminal and gets Ctrl-C from it
directly; elsewhere recorder passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on
to it and its children. recorder exits with its exit code.`
	cmd.Example = `  recorder eval ./cmd/evals --list
  recorder eval ./cmd/evals --dry-run --reps 3
  MODEL_API_KEY=... recorder eval ./cmd/evals --reps 3 --concurrency 4 --max-cost-usd 1
  recorder eval ./bin/evals answers --variant terse --json > report.json
  recorder eval ./examples/agent/cmd/evals --dry-run   # the reference agent's, in this repository`
	return cmd
}

// newCatalogCmd runs a user's catalog program (catalog/catalogcmd).
func newCatalogCmd(e *env) *cobra.Command {
	cmd := newProgramCmd(e, "catalog", "catalog")
	cmd.Short = "Build and run your test catalog's program (catalog/catalogcmd) with its arguments"
	cmd.Long = `catalog runs your test catalog: a Go program whose main calls
catalogcmd.Main with its *catalog.Catalog (package
github.com/agentvcr/agentvcr/catalog/catalogcmd). PKG is its package, which
catalog builds with "go build" into a temporary directory (the build's
output is shown if it fails), or BINARY a program already built. Every
argument after it is the program's: --list lists the suites, their
fingerprints and cells; --suite, --profile and --environment run the cells
they select as evals ("recorder catalog PKG --help" lists them all).

The program runs in the working directory (recorder does not change it),
where it reads the source files its suites name unless it embeds them: run
it from your module's root, or pass the program --sources DIR.
It gets recorder's standard input and output and its signals, as recorder
eval's program does, and recorder exits with its exit code.`
	cmd.Example = `  recorder catalog ./cmd/catalog --list
  recorder catalog ./cmd/catalog --list --json | jq '.[].fingerprint'
  recorder catalog ./cmd/catalog --suite answers --profile haiku --dry-run
  MODEL_API_KEY=... recorder catalog ./cmd/catalog --suite answers --profile haiku --reps 3
  recorder catalog ./examples/agent/cmd/catalog --list   # the reference agent's, in this repository`
	return cmd
}

// newProgramCmd is the command that builds and runs the program of a
// user's: what is shared by eval and catalog, whose example program is
// ./cmd/<dir>.
func newProgramCmd(e *env, name, dir string) *cobra.Command {
	cmd := &cobra.Command{
		Use: name + " PKG|BINARY [ARGS...]",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("recorder %s needs the program to run: its Go package (recorder %s ./cmd/%s --list) or a built binary, followed by the program's arguments", name, name, dir)
			}
			return runProgram(cmd.Context(), e, name, args[0], args[1:])
		},
	}
	// Flags after PKG are the program's, not recorder's.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// runProgram runs target (a built binary, or a Go package it builds
// first) with args, passing stdio, signals and the exit code through.
func runProgram(ctx context.Context, e *env, name, target string, args []string) error {
	bin, err := filepath.Abs(target)
	if err != nil {
		return err
	}
	if st, statErr := os.Stat(bin); statErr != nil || !st.Mode().IsRegular() {
		dir, err := os.MkdirTemp("", "agentvcr-program-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "program")
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, target).CombinedOutput()
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("building %s needs the go command, which is not on PATH: install Go, or pass a built binary", target)
		}
		switch {
		case err != nil && errors.Is(statErr, fs.ErrNotExist):
			// Neither a file nor a package: the argument is wrong.
			return cli.Usagef("%s: no such file or directory, and not a package go build can find (recorder %s PKG|BINARY):\n%s", target, name, bytes.TrimSpace(out))
		case err != nil && bytes.Contains(out, []byte("go.mod file not found")):
			return fmt.Errorf("go build %s: %w: go builds a package from inside its module: run recorder from the module's root\n%s", target, err, out)
		case err != nil:
			return fmt.Errorf("go build %s: %w\n%s", target, err, out)
		}
	}
	child := exec.Command(bin, args...)
	child.Stdin, child.Stdout, child.Stderr = e.stdin, e.stdout, e.stderr
	child.Env = append(os.Environ(), cli.InvocationEnv+"=recorder "+name+" "+target)
	// How the program gets recorder's signals differs between Unix
	// (program_unix.go) and Windows (program_windows.go).
	return runChild(child, target, cli.IsTerminal(e.stdin))
}

// programExit is the program's end as recorder's: its exit code, or
// 128 plus the signal that ended it, as a shell reports it; the program
// has said what went wrong.
func programExit(err error) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err
	}
	code := ee.ExitCode()
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return cli.Reported{Err: cli.Exit{Code: code, Err: err}}
}
