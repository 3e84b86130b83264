package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/agentvcr/agentvcr/examples/agent/llm"
	"github.com/agentvcr/agentvcr/examples/agent/slackio"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// App is the running agent: its routes (Handler), its turns and its
// background work.
type App struct {
	cfg   Config
	st    *store.Store
	gw    *llm.Gateway
	slack *slackio.Client
	http  *http.Client
	turns *turn.Runner
	log   *slog.Logger

	ctx    context.Context // ends when the App closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	background int // titles, heartbeats and Slack ingress still running
	// backgroundDone is closed when background work next ends, then
	// forgotten; nil while nobody waits (the idle route's waitMs).
	backgroundDone chan struct{}
}

// New connects to the database, applies the schema and returns the
// agent, ready to serve. Close stops it.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	hc, err := cfg.httpClient()
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithCancel(context.Background())
	a := &App{cfg: cfg, st: st, http: hc, log: log, ctx: actx, cancel: cancel,
		gw:    &llm.Gateway{BaseURL: cfg.GatewayURL, APIKey: cfg.GatewayAPIKey, HTTP: hc, AgentModel: cfg.AgentModel, FastModel: cfg.FastModel},
		slack: slackio.New(cfg.SlackBotToken, cfg.SlackAPI, hc, log),
	}
	a.turns = turn.New(turn.Config{BotName: cfg.BotName, AgentModel: cfg.AgentModel, FastModel: cfg.FastModel,
		GitHubAPI: cfg.GitHubAPI, PublicURL: cfg.PublicURL, ContextWindowTokens: cfg.ContextWindowTokens,
		ToolCallLimit: cfg.ToolCallLimit, TurnTimeout: cfg.TurnTimeout, TurnSlice: cfg.TurnSlice,
		AfterTurn: a.afterTurn}, st, a.gw, a.slack, hc, log)
	return a, nil
}

// Close stops the background work and the turns (a running turn is
// cancelled) and closes the database.
func (a *App) Close() {
	a.cancel()
	a.wg.Wait()
	a.turns.Close()
	a.http.CloseIdleConnections()
	a.st.Close()
}

// Handler serves the agent's routes.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", a.health)
	mux.HandleFunc("POST /api/webhooks/slack", a.slackEvents)
	mux.HandleFunc("POST /api/conversations", a.createConversation)
	mux.HandleFunc("POST /api/conversations/{id}/messages", a.postMessage)
	mux.HandleFunc("POST /api/conversations/{id}/forks", a.fork)
	mux.HandleFunc("GET /api/conversations/{id}", a.report)
	mux.HandleFunc("GET /api/conversations/{id}/pending-messages", a.pendingMessages)
	mux.HandleFunc("GET /api/oauth/callback/{provider}", a.oauthCallback)
	mux.HandleFunc("GET /api/internal/heartbeat", a.internal(a.heartbeat))
	mux.HandleFunc("GET /api/internal/idle", a.admin(a.idle))
	mux.HandleFunc("GET /api/internal/conversations", a.admin(a.conversations))
	mux.HandleFunc("POST /api/internal/automations", a.admin(a.addAutomation))
	mux.HandleFunc("GET /api/internal/queue", a.admin(a.queue))
	mux.HandleFunc("POST /api/internal/queue/hold", a.admin(a.holdQueue(true)))
	mux.HandleFunc("POST /api/internal/queue/release", a.admin(a.holdQueue(false)))
	mux.HandleFunc("POST /api/webhooks/github", a.githubWebhook)
	mux.HandleFunc("POST /api/events", a.ingestEvent)
	mux.HandleFunc("POST /api/internal/event-automations", a.admin(a.addEventAutomation))
	mux.HandleFunc("POST /api/internal/watches", a.admin(a.addWatch))
	mux.HandleFunc("POST /api/internal/memories", a.admin(a.addMemory))
	mux.HandleFunc("POST /api/internal/credentials", a.admin(a.addCredential))
	return mux
}

// goBackground runs f as background work the idle route waits for.
func (a *App) goBackground(f func(ctx context.Context)) {
	a.mu.Lock()
	a.background++
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			a.mu.Lock()
			a.background--
			if a.backgroundDone != nil {
				close(a.backgroundDone)
				a.backgroundDone = nil
			}
			a.mu.Unlock()
		}()
		f(a.ctx)
	}()
}

func (a *App) logf(level slog.Level, format string, args ...any) {
	if a.log != nil {
		a.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}
