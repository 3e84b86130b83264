package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/history"
)

func TestExitCode(t *testing.T) {
	parent := &cobra.Command{Use: "recorder"}
	export := &cobra.Command{Use: "export"}
	parent.AddCommand(export)
	tests := []struct {
		name string
		err  error
		code int
	}{
		{"none", nil, 0},
		{"a failure", errors.New("connect: refused"), 1},
		{"usage", Usagef("--reps takes 1 or more"), 2},
		{"bad input", fmt.Errorf("load a.json: %w", history.ErrInvalid), 2},
		{"a flag, through FlagError", FlagError(export, errors.New("unknown flag: --bogus")), 2},
		{"interrupted", fmt.Errorf("%w: 3 files not written", ErrInterrupted), ExitInterrupted},
		{"a program's own, passed through", Reported{Exit{Code: 3, Err: errors.New("exit status 3")}}, 3},
		{"a program interrupted", Reported{Exit{Code: 130, Err: errors.New("signal: interrupt")}}, 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitCode(tt.err); got != tt.code {
				t.Fatalf("ExitCode(%v) = %d; want %d", tt.err, got, tt.code)
			}
		})
	}
	if got, want := FlagError(export, errors.New("unknown flag: --bogus")).Error(), "unknown flag: --bogus (recorder export --help lists its flags)"; got != want {
		t.Fatalf("FlagError says %q; want %q", got, want)
	}
}

// A command's complaint about its arguments or flags says what to pass
// and names the command as the user typed it: through recorder, the
// command line recorder ran the program with.
func TestUsageMessagesNameTheCommandAndWhatToPass(t *testing.T) {
	root := &cobra.Command{Use: "recorder"}
	prune := &cobra.Command{Use: "prune DIR USED-FILE..."}
	schema := &cobra.Command{Use: "schema"}
	root.AddCommand(prune, schema)
	program := &cobra.Command{Use: "catalog [flags]"}
	tests := []struct {
		name       string
		invocation string
		err        func() error
		want       string
	}{
		{"too few arguments", "", func() error { return Args(cobra.MinimumNArgs(2))(prune, nil) },
			"recorder prune takes DIR USED-FILE...: requires at least 2 arg(s), only received 0 (recorder prune --help says more)"},
		{"an argument to a command that takes none", "", func() error { return Args(cobra.NoArgs)(schema, []string{"x"}) }, `unknown command "x" for "recorder schema"`},
		{"a flag", "", func() error { return FlagError(prune, errors.New("unknown flag: --bogus")) }, "unknown flag: --bogus (recorder prune --help lists its flags)"},
		{"a program's flag", "", func() error { return FlagError(program, errors.New("unknown flag: --bogus")) }, "unknown flag: --bogus (catalog --help lists its flags)"},
		{"a program's flag, run by recorder", "recorder catalog ./cmd/catalog", func() error { return FlagError(program, errors.New("unknown flag: --bogus")) },
			"unknown flag: --bogus (recorder catalog ./cmd/catalog --help lists its flags)"},
		{"a subcommand's flag, whatever ran it", "recorder catalog ./cmd/catalog", func() error { return FlagError(prune, errors.New("unknown flag: --bogus")) },
			"unknown flag: --bogus (recorder prune --help lists its flags)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(InvocationEnv, tt.invocation)
			err := tt.err()
			if !errors.As(err, new(UsageError)) || err.Error() != tt.want {
				t.Fatalf("%v (%T); want the usage error %q", err, err, tt.want)
			}
		})
	}
}
