package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/transcript"
)

func newViewCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "view FILE",
		Short: "Render a recorded-history file as an HTML transcript",
		Long: `view renders a recorded-history file as one self-contained HTML page, as the
fixture renders a test: who said what, each tool call with its arguments
and result, and each turn's state. Every text is escaped. FILE "-" reads
standard input; the page goes to standard output, or to --out.`,
		Example: `  recorder view recordings/samples/slack-thread.json > thread.html
  recorder view -o launch.html history/testdata/launch-planning.json
  recorder export --conversation slack:C0123:1790000000.000100 | recorder view - > thread.html`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("view renders one recorded-history file: recorder view FILE (\"-\" reads standard input; got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			var rec *history.Recording
			var err error
			if name == "-" {
				rec, err = history.Read(e.stdin, "standard input")
			} else {
				rec, err = history.ReadFile(name)
			}
			if err != nil {
				return cli.UsageError{Err: err}
			}
			page := transcript.FromHistory(name, rec)
			if out == "" {
				return transcript.Write(e.stdout, page)
			}
			return atomicfile.Write(out, 0o644, func(w io.Writer) error { return transcript.Write(w, page) })
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the page to this file instead of standard output")
	return cmd
}
