package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/loader"
)

func newLoadCmd(e *env) *cobra.Command {
	var (
		db           dbFlags
		id           string
		throughReply string
		asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "load [flags] FILE...",
		Short: "Load recorded-history JSON into a test database",
		Long: `load writes each recorded conversation into the database the way the
product's own fork copies rows: the conversation row, the identities it
references, then every event row with its seq, versions, idempotency key,
payload and time unchanged, in one transaction per file. A failure rolls the
file back and names the row. Loading a file to the same conversation id again
writes nothing and reports "already loaded".

Without --conversation-id a file keeps the id of the conversation it was
exported from; a file without one (such as a Junior recording) gets
local:web:<hash of the file>. FILE "-" reads standard input (then give
--conversation-id unless the input carries its source id).

It prints each loaded conversation id, or with --json one object per file;
on a terminal, a file of thousands of rows shows a counter on stderr.`,
		Example: `  recorder load --database-url postgres://localhost/agent_test recordings/samples/slack-thread.json
  recorder load --conversation-id local:web:fork-test --through-reply turn_m1:assistant:1 launch.json
  recorder export --conversation local:web:4f1c | recorder load --conversation-id local:web:copy -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("name at least one FILE to load (- for standard input)")
			}
			if id != "" && len(args) > 1 {
				return cli.Usagef("--conversation-id names one conversation: load one FILE at a time with it")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := db.lookupProfile()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			conn, err := db.connect(ctx, e)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			l := &loader.Loader{DB: conn, Profile: p}
			enc := json.NewEncoder(e.stdout)
			// Every file is tried: a failure is named and the rest are
			// loaded; the exit code is the worst.
			var failed []error
			loaded := 0
			for _, file := range args {
				opts := loader.Options{ConversationID: id, ThroughReply: throughReply}
				shown := false
				if cli.IsTerminal(e.stderr) {
					// A large file takes a while: a counter, for a person.
					opts.Progress = func(rows int) {
						if rows >= loader.ProgressEvery || shown {
							fmt.Fprintf(e.stderr, "\rloading %s: %d rows", file, rows)
							shown = true
						}
					}
				}
				var res *loader.Result
				if file == "-" {
					opts.File = "<stdin>"
					res, err = l.Load(ctx, e.stdin, opts)
				} else {
					res, err = l.LoadFile(ctx, file, opts)
				}
				if shown {
					fmt.Fprintln(e.stderr)
				}
				if err != nil && ctx.Err() != nil {
					// The error is the cancellation's echo (a closed
					// connection): say what it left undone instead.
					return fmt.Errorf("%w; %d of %d files loaded, %s rolled back", cli.ErrInterrupted, loaded, len(args), file)
				}
				switch {
				case errors.Is(err, loader.ErrNeedConversationID), errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.EISDIR):
					err = cli.UsageError{Err: err}
				case errors.Is(err, loader.ErrAlreadyLoaded):
					fmt.Fprintf(e.stderr, "%s: already loaded as %s\n", file, res.ConversationID)
					err = nil
				}
				if err != nil {
					failed = append(failed, err)
					if len(args) > 1 {
						fmt.Fprintf(e.stderr, "recorder: %v\n", err)
					}
					continue
				}
				loaded++
				if asJSON {
					enc.Encode(res)
				} else {
					fmt.Fprintln(e.stdout, res.ConversationID)
				}
			}
			switch {
			case len(failed) == 0:
				return nil
			case len(args) == 1:
				return failed[0]
			}
			summary := fmt.Errorf("%d of %d files were not loaded (each is named above)", len(failed), len(args))
			for _, err := range failed {
				if cli.ExitCode(err) == 2 {
					return cli.UsageError{Err: summary}
				}
			}
			return summary
		},
	}
	db.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&id, "conversation-id", "", "load as the conversation with this id (one FILE only)")
	fl.StringVar(&throughReply, "through-reply", "", "load only what a fork at this delivered reply message id copies")
	fl.BoolVar(&asJSON, "json", false, "print one JSON object per file")
	return cmd
}
