package turn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/llm"
	"github.com/agentvcr/agentvcr/examples/agent/slackio"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// Config is what a turn needs to know of the agent's configuration.
type Config struct {
	BotName    string // the name the replies carry
	AgentModel string // the model of the agent loop
	FastModel  string // the model of summaries
	GitHubAPI  string // the GitHub API the githubIssues tool calls
	PublicURL  string // the agent's own URL, for OAuth links

	ContextWindowTokens int           // past it, the history is compacted
	ToolCallLimit       int           // past it, the model must answer
	TurnTimeout         time.Duration // a turn past it fails
	TurnSlice           time.Duration // a turn past it pauses and is re-queued

	// AfterTurn, if set, is told of each turn that completed, in the
	// turn's goroutine before its conversation takes the next input: how
	// a plugin that learns from turns (memory extraction) starts its
	// background work while the turn still counts as running.
	AfterTurn func(Completed)
}

// Runner runs the turns of every conversation. Its zero value is not
// usable: New makes one, Close stops it.
type Runner struct {
	cfg   Config
	st    *store.Store
	gw    *llm.Gateway
	slack *slackio.Client
	http  *http.Client
	log   *slog.Logger

	ctx    context.Context // ends when the Runner closes
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu         sync.Mutex
	boxes      map[string]*mailbox
	held       bool                   // the queue is held: no queued work starts
	holdPaused bool                   // paused turns wait; inputs go on
	pending    map[string]pendingAuth // by conversation: the link a web user must follow
	// changed is closed at the queue's next change (Changed), then
	// forgotten; nil while nobody waits.
	changed chan struct{}
}

// New is a Runner on st that calls the model through gw, Slack through
// sl, and its tools' web through hc; log, if not nil, gets what goes
// wrong.
func New(cfg Config, st *store.Store, gw *llm.Gateway, sl *slackio.Client, hc *http.Client, log *slog.Logger) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	return &Runner{cfg: cfg, st: st, gw: gw, slack: sl, http: hc, log: log, ctx: ctx, cancel: cancel,
		boxes: map[string]*mailbox{}, pending: map[string]pendingAuth{}}
}

// Close stops the workers: a running turn is cancelled and stays open,
// as after a crash.
func (r *Runner) Close() {
	r.cancel()
	r.wg.Wait()
}

// errStore marks an error of the store: the turn that meets it fails
// with persistence_failed.
var errStore = errors.New("the conversation could not be stored")

// append writes rows to the conversation's log; its error is errStore's.
func (r *Runner) append(id string, rows ...store.Row) error {
	if _, err := r.st.Append(r.ctx, id, rows...); err != nil {
		return fmt.Errorf("%w: %w", errStore, err)
	}
	return nil
}

func (r *Runner) logf(level slog.Level, format string, args ...any) {
	if r.log != nil {
		r.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}
