package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

func newPruneCmd(e *env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "prune DIR USED-FILE...",
		Short: "Delete the recordings no run used",
		Long: `prune removes from the cassettes in DIR every recording that none of the
given runs used. Each run writes its used-file on exit with
recorder proxy --used-file. Cassettes of rules no run mentions are left
alone; a cassette left empty is deleted. Prune with the used-files of runs
against the cassettes as they are now: ids change when a cassette is pruned.`,
		Example: `  recorder proxy --used-file /tmp/used-unit.json &  # ...run the suites...
  recorder prune recordings/cassettes /tmp/used-unit.json /tmp/used-evals.json
  recorder prune --dry-run recordings/cassettes /tmp/used-unit.json`,
		Args: cli.Args(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			used := map[string]map[int]bool{}
			for _, f := range args[1:] {
				b, err := os.ReadFile(f)
				if err != nil {
					return cli.UsageError{Err: err}
				}
				var run map[string][]int
				if err := json.Unmarshal(b, &run); err != nil {
					return cli.Usagef("%s is not a used-file of recorder proxy: %v", f, err)
				}
				for rule, ids := range run {
					if used[rule] == nil {
						used[rule] = map[int]bool{}
					}
					for _, id := range ids {
						used[rule][id] = true
					}
				}
			}
			removed, err := cassette.Prune(args[0], used, dryRun)
			if errors.Is(err, cassette.ErrUnknownRecording) {
				return cli.UsageError{Err: err}
			}
			rules := make([]string, 0, len(removed))
			for r := range removed {
				rules = append(rules, r)
			}
			sort.Strings(rules)
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			for _, r := range rules {
				fmt.Fprintf(e.stdout, "%s: %s %d unused recordings\n", r, verb, removed[r])
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, remove nothing")
	return cmd
}
