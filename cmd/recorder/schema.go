package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
)

func newSchemaCmd(e *env) *cobra.Command {
	var (
		db    dbFlags
		apply bool
	)
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print or apply the product's database schema",
		Long: `schema prints the DDL of the tables that export and load use (for the junior
profile: junior_users, junior_identities, junior_conversations and
junior_conversation_events, as in Junior's public schema). With --apply it
creates whatever of them is missing in the database; running it again
changes nothing.`,
		Example: `  recorder schema
  recorder schema --apply --database-url postgres://localhost/agent_test`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := db.lookupProfile()
			if err != nil {
				return err
			}
			if !apply {
				_, err := fmt.Fprint(e.stdout, p.DDL)
				return err
			}
			conn, err := db.connect(cmd.Context(), e)
			if err != nil {
				return err
			}
			defer conn.Close(cmd.Context())
			if err := p.Apply(cmd.Context(), conn); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "schema %s applied to database %s\n", p.Name, conn.Config().Database)
			return nil
		},
	}
	db.register(cmd)
	cmd.Flags().BoolVar(&apply, "apply", false, "create the missing tables and indexes in the database")
	return cmd
}
