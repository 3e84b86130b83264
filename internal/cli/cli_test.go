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
