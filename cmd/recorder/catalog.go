package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/examples/agent/agentcatalog"
	"github.com/agentvcr/agentvcr/internal/cli"
)

// newCatalogCmd lists the reference agent's test catalog.
func newCatalogCmd(e *env) *cobra.Command {
	var asJSON, list bool
	cmd := &cobra.Command{
		Use:   "catalog",
		Short: "List the reference agent's test catalog: suites, fingerprints, cells",
		Long: `catalog validates the reference agent's test catalog (examples/agent/agentcatalog)
and lists each suite, by rank, with its tier, its size, its fingerprint (a digest
of its definition and of the source files it names: it changes with anything
the suite measures) and the ids of its cells, <suite>.<profile>.<environment>.<case>.

A catalog that is not valid (a suite whose size differs from the one it
declares, a credential that is not a secret_ref, a field that looks like a
secret) is refused with every problem, naming the suite and the field: exit 2.
Run it from inside the agentvcr repository, where the suites' sources are.
recorder eval --suite S --profile P runs the cells.`,
		Example: `  recorder catalog --list
  recorder catalog --list --json | jq '.[].fingerprint'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !list {
				return cli.Usagef("catalog lists the suites and cells: it has nothing else to do with --list=false")
			}
			root, err := agentcatalog.Root()
			if err != nil {
				return err
			}
			list, err := agentcatalog.New(root).List()
			if err != nil {
				return catalogError(err)
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			for _, l := range list {
				fmt.Fprintf(e.stdout, "%s (%s, rank %d): %d cells, fingerprint %s\n", l.ID, l.Tier, l.Rank, l.Size, l.Fingerprint)
				for _, c := range l.Cells {
					fmt.Fprintf(e.stdout, "  %s\n", c)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", true, "list the suites and their cells (what catalog does)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the listing as JSON")
	return cmd
}
