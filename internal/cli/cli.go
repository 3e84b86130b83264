// Package cli holds what agentvcr's commands share: usage errors, the exit
// codes, signal handling and terminal detection.
//
// Every command of recorder, sanitize, and the programs built on
// evals/evalcmd and catalog/catalogcmd exits with the codes of one table,
// ExitCodes, which each root command prints in its help:
//
//	0    success
//	1    the operation failed: a database that cannot be reached, a
//	     refused write, an attempt that could not run
//	2    usage or bad input: a flag, an argument, a malformed file, a
//	     missing credential (the user's setup: the message names the
//	     variable)
//	130  interrupted: SIGINT or SIGTERM
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/schema"
)

// UsageError marks an error in how a command was called: exit code 2.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// ErrInterrupted marks the error of a command a signal stopped; what
// wraps it says what was left undone.
var ErrInterrupted = errors.New("interrupted")

// Reported wraps the error of a command that has told the user about it
// already, in its own format (a JSON log, say): the caller exits with its
// code and prints nothing more.
type Reported struct{ Err error }

func (r Reported) Error() string { return r.Err.Error() }
func (r Reported) Unwrap() error { return r.Err }

// Exit carries the exit code to end with: that of a program a command
// ran (recorder eval), passed through.
type Exit struct {
	Code int
	Err  error
}

func (e Exit) Error() string { return e.Err.Error() }
func (e Exit) Unwrap() error { return e.Err }

// ExitInterrupted is the exit code of a command a signal stopped, as a
// shell reports one that SIGINT killed.
const ExitInterrupted = 130

// ExitCodes is the package doc's table of exit codes, for the end of a
// root command's Long help.
const ExitCodes = `Exit codes:
  0    success
  1    the operation failed: a database that cannot be reached, a refused
       write, an attempt that could not run
  2    usage or bad input: a flag, an argument, a malformed file, a missing
       credential (the message names the variable)
  130  interrupted (SIGINT or SIGTERM)`

// SignalContext returns a context that the first SIGINT or SIGTERM
// cancels, so that a command stops gracefully; a second signal, with the
// default handling back, ends the process. stop releases the signals.
func SignalContext() (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.Background())
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-caught:
			// The default handling is back before anything sees the
			// context end: a second signal, however soon, ends the
			// process instead of being caught and lost.
			signal.Stop(caught)
			cancel(fmt.Errorf("%w: %v", ErrInterrupted, sig))
		case <-ctx.Done():
			signal.Stop(caught)
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// FlagError is a cobra FlagErrorFunc: a flag that does not parse is a
// usage error that names the command it was given to, whose help lists
// its flags.
func FlagError(cmd *cobra.Command, err error) error {
	return UsageError{Err: fmt.Errorf("%w (%s --help lists its flags)", err, commandLine(cmd))}
}

// InvocationEnv is the environment variable in which recorder eval and
// recorder catalog pass the program they run the command line that ran
// it ("recorder catalog ./cmd/catalog"), so that its messages name the
// command the user typed, not the program's own name.
const InvocationEnv = "AGENTVCR_INVOCATION"

// commandLine is how the user ran cmd: its path, or for a root command
// that recorder ran, recorder's command line.
func commandLine(cmd *cobra.Command) string {
	if inv := os.Getenv(InvocationEnv); inv != "" && !cmd.HasParent() {
		return inv
	}
	return cmd.CommandPath()
}

// ExitCode maps an error to the exit code: an Exit's own, 2 for usage and
// bad input, 130 for an interruption, else 1.
func ExitCode(err error) int {
	var u UsageError
	var exit Exit
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case errors.As(err, &u), errors.Is(err, history.ErrInvalid), errors.Is(err, schema.ErrUnknownProfile):
		return 2
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"),
		strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		// cobra's own parse errors
		return 2
	}
	return 1
}

// IsTerminal reports whether f, a standard stream, is a terminal (not
// merely a character device such as /dev/null): where progress lines
// belong, and whose reader is in the terminal's foreground.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// Args makes a cobra argument check's complaint a usage error that says
// what to pass: the arguments its Use line names, for cobra's own words
// ("requires at least 2 arg(s), only received 0") do not.
func Args(check func(cmd *cobra.Command, args []string) error) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		if _, want, ok := strings.Cut(cmd.Use, " "); ok {
			err = fmt.Errorf("%s takes %s: %w (%s --help says more)", commandLine(cmd), want, err, commandLine(cmd))
		}
		return UsageError{err}
	}
}
