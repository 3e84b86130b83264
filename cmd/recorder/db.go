package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/pgerr"
	"github.com/agentvcr/agentvcr/schema"
)

// dbFlags are the flags of every command that talks to a database.
type dbFlags struct {
	url     string
	profile string
}

func (f *dbFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	cmd.Flags().StringVar(&f.profile, "profile", schema.DefaultProfile, "product schema profile")
}

func (f *dbFlags) lookupProfile() (*schema.Profile, error) {
	return schema.Lookup(f.profile)
}

// connect opens one connection, with a bounded wait, and says what to check
// when the database cannot be reached.
func (f *dbFlags) connect(ctx context.Context, e *env) (*pgx.Conn, error) {
	url := f.url
	if url == "" {
		url = e.getenv("DATABASE_URL")
	}
	if url == "" {
		return nil, cli.Usagef("no database: pass --database-url or set DATABASE_URL")
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, cli.Usagef("--database-url: %v", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database %s at %s:%d: %w (check --database-url or $DATABASE_URL)",
			cfg.Database, cfg.Host, cfg.Port, pgerr.Once(err))
	}
	return conn, nil
}
