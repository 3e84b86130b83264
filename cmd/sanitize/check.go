package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/sanitize"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

// errCheckFailed is returned when check found problems; they are printed
// already.
var errCheckFailed = errors.New("check failed")

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		asJSON    bool
		rulesFile string
	)
	cmd := &cobra.Command{
		Use:   "check [--json] PATH...",
		Short: "Check recorded history meant for git: stamped, no emails, no secrets",
		Long: `check fails (exit 1) when a file has no sanitizer stamp, holds an email
address outside the reserved domains (example.com, example.org, example.net,
*.example, *.test, *.invalid), or holds a secret shape. It needs no key. Run it
in CI over the recordings in git. Directories are searched for *.json files;
sanitizer reports found there are skipped. Findings name the file, row seq
and JSON path, never the value; when there are none, a line on standard
error says how many files were checked.`,
		Example: `  sanitize check recordings/
  sanitize check --json recordings/launch.json
  sanitize check --rules rules.json recordings/`,
		Args: cli.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			rules := sanitize.DefaultRules()
			if rulesFile != "" {
				f, err := os.Open(rulesFile)
				if err != nil {
					return badInput(fmt.Errorf("--rules: %w", err))
				}
				more, err := sanitize.ParseRules(f, rulesFile)
				f.Close()
				if err != nil {
					return badInput(err)
				}
				rules.Merge(more)
			}
			var files []string
			for _, p := range args {
				info, err := os.Stat(p)
				if err != nil {
					return badInput(err)
				}
				if !info.IsDir() {
					files = append(files, p)
					continue
				}
				more, err := sanitize.JSONFiles(p)
				if err != nil {
					return err
				}
				files = append(files, more...)
			}
			enc := json.NewEncoder(stdout)
			problems, checked := 0, 0
			for _, f := range files {
				doc, err := os.ReadFile(f)
				if err != nil {
					return err
				}
				if isReport(doc) {
					continue
				}
				checked++
				found, err := leakcheck.Check(doc, f, rules.LeakRules())
				if err != nil {
					return err
				}
				for _, fd := range found {
					problems++
					if asJSON {
						enc.Encode(fd)
					} else if fd.Seq >= 0 {
						fmt.Fprintf(stdout, "%s: row seq %d: %s: %s\n", fd.File, fd.Seq, fd.Path, fd.Problem)
					} else {
						fmt.Fprintf(stdout, "%s: %s: %s\n", fd.File, fd.Path, fd.Problem)
					}
				}
			}
			if problems > 0 {
				return fmt.Errorf("%w: %d problems in %d files", errCheckFailed, problems, len(files))
			}
			if checked == 0 {
				return cli.Usagef("no recorded-history file (*.json) in %s: nothing was checked", strings.Join(args, ", "))
			}
			// On stderr, so that --json's stdout stays the findings only.
			noun := "files"
			if checked == 1 {
				noun = "file"
			}
			fmt.Fprintf(stderr, "checked %d %s: no problems\n", checked, noun)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per problem")
	cmd.Flags().StringVar(&rulesFile, "rules", "", "the rules file the files were sanitized with, on top of the junior profile's (its notNames, notSecrets, idFields)")
	return cmd
}

// isReport reports whether a JSON file is a sanitizer report, which holds
// counts only.
func isReport(doc []byte) bool {
	return gjson.GetBytes(doc, "tool").String() == "agentvcr-sanitize" && !gjson.GetBytes(doc, "events").Exists()
}
