// Command agent is agentvcr's reference agent: a small Slack and web
// assistant with getsentry/junior's boundary (its routes, its Slack and
// model traffic, the rows one turn writes, forks copied as Junior copies
// them), for the fixture to drive and for users to copy.
//
//	DATABASE_URL=postgres://localhost/agent SLACK_SIGNING_SECRET=... SLACK_BOT_TOKEN=xoxb-... \
//	AI_GATEWAY_API_KEY=... AGENT_SCHEDULER_SECRET=... go run ./examples/agent
//
// Outbound HTTP honours HTTPS_PROXY and SSL_CERT_FILE, so
// eval "$(recorder env)" puts it behind the recording proxy.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/app"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := app.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("agent listening", "addr", "http://"+ln.Addr().String(), "gateway", cfg.GatewayURL, "proxy", cfg.Proxy != "")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
