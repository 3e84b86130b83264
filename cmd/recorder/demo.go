package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/export"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
	"github.com/agentvcr/agentvcr/loader"
	"github.com/agentvcr/agentvcr/recordings"
	"github.com/agentvcr/agentvcr/schema"
)

func newDemoCmd(e *env) *cobra.Command {
	var sample string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Export and load a sample conversation on a throwaway PostgreSQL",
		Long: `demo shows the history pipeline end to end without touching anything of
yours. It starts a private PostgreSQL in a temporary directory (it needs the
server binaries: apt-get install postgresql), writes a sample conversation
from recordings/samples into one database, exports it, loads the export into
a second database, checks that every row agrees, and removes everything.`,
		Example: `  recorder demo
  recorder demo --sample web-launch.json`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), e, sample) },
	}
	cmd.Flags().StringVar(&sample, "sample", "slack-thread.json", "sample recording to use, from recordings/samples")
	return cmd
}

func runDemo(ctx context.Context, e *env, sample string) (err error) {
	data, err := fs.ReadFile(recordings.Samples(), sample)
	if err != nil {
		names, _ := fs.Glob(recordings.Samples(), "*.json")
		return cli.Usagef("--sample %s: no such sample (have %v)", sample, names)
	}
	step := 0
	say := func(format string, args ...any) {
		step++
		fmt.Fprintf(e.stdout, "%d. %s\n", step, fmt.Sprintf(format, args...))
	}
	fmt.Fprintln(e.stdout, "agentvcr demo: export and load a recorded conversation through PostgreSQL")

	start := time.Now()
	cluster, err := pgcluster.Start(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := cluster.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
		if err == nil {
			say("stopped PostgreSQL and removed its files")
		}
	}()
	say("started a throwaway PostgreSQL in %.1fs", time.Since(start).Seconds())

	p, err := schema.Lookup("")
	if err != nil {
		return err
	}
	var conns [2]*pgx.Conn
	for i := range conns {
		url, err := cluster.CreateDatabase(ctx)
		if err != nil {
			return err
		}
		if conns[i], err = pgx.Connect(ctx, url); err != nil {
			return err
		}
		defer conns[i].Close(context.WithoutCancel(ctx))
		if err := p.Apply(ctx, conns[i]); err != nil {
			return err
		}
	}
	source, target := conns[0], conns[1]
	say("created two databases with the %s schema: %s (the product) and %s (a test)",
		p.Name, source.Config().Database, target.Config().Database)

	written, err := (&loader.Loader{DB: source, Profile: p}).Load(ctx, bytes.NewReader(data), loader.Options{File: sample})
	if err != nil {
		return err
	}
	say("wrote %s into %s as the product would: conversation %s, %d rows, %d identities",
		sample, source.Config().Database, written.ConversationID, written.Events, written.Identities)

	var exported bytes.Buffer
	ex, err := (&export.Exporter{DB: source, Profile: p, WithIdentities: true}).Export(ctx, written.ConversationID, &exported)
	if err != nil {
		return err
	}
	say("exported it: %d rows, %d identities, %d bytes of recorded-history JSON", ex.Events, ex.Identities, exported.Len())

	loaded, err := (&loader.Loader{DB: target, Profile: p}).Load(ctx, &exported, loader.Options{File: "export"})
	if err != nil {
		return err
	}
	say("loaded the export into %s: %d rows in one transaction", target.Config().Database, loaded.Events)

	rows, err := sameRows(ctx, source, target, written.ConversationID)
	if err != nil {
		return err
	}
	say("compared the two databases: all %d rows agree in every column", rows)
	return nil
}

// sameRows checks that the conversation's event rows agree in both
// databases, column by column, and returns how many there are.
func sameRows(ctx context.Context, a, b *pgx.Conn, id string) (int, error) {
	const q = `SELECT seq, history_version, schema_version, idempotency_key, type, payload, actor_identity_id, created_at
		FROM junior_conversation_events WHERE conversation_id = $1 ORDER BY seq`
	var sets [2][][]any
	for i, conn := range []*pgx.Conn{a, b} {
		rows, err := conn.Query(ctx, q, id)
		if err != nil {
			return 0, err
		}
		if sets[i], err = pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() }); err != nil {
			return 0, err
		}
	}
	if !reflect.DeepEqual(sets[0], sets[1]) {
		return 0, fmt.Errorf("the databases disagree about conversation %s", id)
	}
	return len(sets[0]), nil
}
