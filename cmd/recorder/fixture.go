package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/fixtureservice"
	"github.com/agentvcr/agentvcr/internal/cli"
)

func newFixtureCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fixture",
		Short: "Serve the Go test fixture to tests in other languages",
		Args:  cli.Args(cobra.NoArgs),
	}
	cmd.AddCommand(newFixtureServeCmd(e))
	return cmd
}

type fixtureServeFlags struct {
	listen           string
	databaseServer   string
	exitOnStdinClose bool
}

func newFixtureServeCmd(e *env) *cobra.Command {
	var f fixtureServeFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host test fixtures over HTTP on loopback, for run/continue/fork from any language",
		Long: `serve hosts the Go test fixture (package fixture) over HTTP on loopback, so
that a test in another language drives its agent app as a Go test would: it
creates a fixture for the app (a command the fixture runs, or an app the test
started itself and attaches), then runs, continues and forks conversations,
loads history, inserts setup data, scripts the model and answers progress.
The npm package's fixture() is its client (docs/typescript.md).

It prints one JSON line when it is ready:

  {"url": URL, "token": T}

Every call needs "Authorization: Bearer T", from loopback, to a loopback
host. The routes are the OpenAPI document at GET URL/v1/openapi.json. Each
fixture has its own database, made on --database-server, or else on a
throwaway PostgreSQL cluster the service starts on first need (the server
binaries must be installed) and stops when it stops.

SIGINT or SIGTERM stops it: the fixtures left are deleted as their clients
would have (apps stopped, recordings and reports written, databases
dropped), and it exits 130. With --exit-on-stdin-close the end of its
standard input stops it the same way, so it ends with the test process that
started it, however that dies.`,
		Example: `  recorder fixture serve
  recorder fixture serve --database-server postgres://postgres@127.0.0.1:5432/postgres
  recorder fixture serve --exit-on-stdin-close   # as the npm package starts it`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), e) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:0", "address of the service (loopback only)")
	fl.StringVar(&f.databaseServer, "database-server", "", "PostgreSQL server (postgres:// URL of a user who may create databases) for the fixtures' databases (default: a throwaway cluster)")
	fl.BoolVar(&f.exitOnStdinClose, "exit-on-stdin-close", false, "read standard input and stop, as on SIGTERM, at its end")
	return cmd
}

func (f *fixtureServeFlags) run(ctx context.Context, e *env) error {
	if host, _, err := net.SplitHostPort(f.listen); err != nil || !isLoopback(host) {
		return cli.Usagef("--listen %q: the service runs commands and hands out databases, so it listens on loopback only, such as 127.0.0.1:0", f.listen)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", f.listen, err)
	}
	token, err := fixtureservice.NewToken()
	if err != nil {
		ln.Close()
		return err
	}
	if f.exitOnStdinClose {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			io.Copy(io.Discard, e.stdin)
			cancel()
		}()
	}
	svc := fixtureservice.New(token, fixtureservice.Options{DatabaseServer: f.databaseServer})
	srv := &http.Server{Handler: svc, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ready, _ := json.Marshal(map[string]string{"url": "http://" + ln.Addr().String(), "token": token})
	fmt.Fprintln(e.stdout, string(ready))
	select {
	case <-ctx.Done():
	case err := <-served:
		svc.Close()
		return err
	}
	// Calls under way end as their fixtures are deleted; then the
	// server's connections close.
	closeErr := svc.Close()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := srv.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if closeErr != nil {
		return closeErr
	}
	return cli.Reported{Err: cli.ErrInterrupted}
}
