package app

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// internal guards the heartbeat: the scheduler secret as a bearer.
func (a *App) internal(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !bearer(r, a.cfg.SchedulerSecret) {
			writeError(w, http.StatusUnauthorized, "send Authorization: Bearer $AGENT_SCHEDULER_SECRET")
			return
		}
		h(w, r)
	}
}

// admin guards the routes a test drives the agent with: off unless
// AGENT_ADMIN_SECRET is set, then that secret as a bearer.
func (a *App) admin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.AdminSecret == "" {
			writeError(w, http.StatusNotFound, "this route is off: set AGENT_ADMIN_SECRET to turn it on")
			return
		}
		if !a.adminCaller(r) {
			writeError(w, http.StatusUnauthorized, "send Authorization: Bearer $AGENT_ADMIN_SECRET")
			return
		}
		h(w, r)
	}
}

func (a *App) adminCaller(r *http.Request) bool {
	return a.cfg.AdminSecret != "" && bearer(r, a.cfg.AdminSecret)
}

func bearer(r *http.Request, secret string) bool {
	got := r.Header.Get("Authorization")
	return subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+secret)) == 1
}

// heartbeat is GET /api/internal/heartbeat: 202, then each due
// automation starts a turn that answers in its destination.
func (a *App) heartbeat(w http.ResponseWriter, r *http.Request) {
	a.goBackground(func(ctx context.Context) {
		due, err := a.st.TakeDue(ctx, time.Now())
		if err != nil {
			a.logf(slog.LevelError, "heartbeat: %v", err)
			return
		}
		for _, au := range due {
			a.runAutomation(ctx, au)
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "accepted"})
}

// maxIdleWait bounds the idle route's waitMs.
const maxIdleWait = time.Minute

// idle is GET /api/internal/idle: whether the agent has nothing to do (no
// queued input, no running turn, no background work). A turn waiting for
// an authorization or held in the queue does not count as work.
//
// With ?waitMs=n (at most a minute) it answers as soon as the agent is
// idle, or after n ms with what keeps it busy: a test waiting for the
// agent learns the moment it is done, without asking again and again.
// The wait ends with the turn or background work that ends last, woken
// in-process; another instance on the same database has its own queue,
// and its own idle route.
func (a *App) idle(w http.ResponseWriter, r *http.Request) {
	var expired <-chan time.Time
	if v := r.URL.Query().Get("waitMs"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || time.Duration(n)*time.Millisecond > maxIdleWait {
			writeError(w, http.StatusBadRequest, "waitMs must be a number of milliseconds from 0 to 60000")
			return
		}
		timer := time.NewTimer(time.Duration(n) * time.Millisecond)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		// The channels first: a change after the state is read wakes
		// the wait.
		queueChanged, backgroundDone := a.turns.Changed(), a.backgroundEnds()
		st := a.idleState()
		if st["idle"] == true || expired == nil {
			writeJSON(w, http.StatusOK, st)
			return
		}
		select {
		case <-queueChanged:
		case <-backgroundDone:
		case <-expired:
			writeJSON(w, http.StatusOK, a.idleState())
			return
		case <-r.Context().Done():
			return // the caller is gone
		case <-a.ctx.Done():
			writeJSON(w, http.StatusOK, a.idleState())
			return
		}
	}
}

// backgroundEnds returns a channel closed when background work next ends.
func (a *App) backgroundEnds() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.backgroundDone == nil {
		a.backgroundDone = make(chan struct{})
	}
	return a.backgroundDone
}

// idleState is the idle route's answer.
func (a *App) idleState() map[string]any {
	q := a.turns.Queue()
	a.mu.Lock()
	background := a.background
	a.mu.Unlock()
	busy := map[string]int{}
	for _, it := range q.Items {
		busy[it.Kind]++
	}
	// Inputs behind a turn that waits for an authorization wait with it.
	// A held queue, or a held paused turn, waits for the test: idle.
	paused := busy["paused"]
	if q.HoldPaused {
		paused = 0
	}
	idle := background == 0 && busy["running"] == 0 && (q.Held || busy["input"]+paused == 0)
	return map[string]any{"idle": idle, "running": busy["running"], "queued": busy["input"] + busy["paused"],
		"background": background, "awaitingAuthorization": busy["awaiting_authorization"], "held": q.Held, "holdPaused": q.HoldPaused}
}

// queue is GET /api/internal/queue: what waits and what runs.
func (a *App) queue(w http.ResponseWriter, r *http.Request) {
	q := a.turns.Queue()
	if q.Items == nil {
		q.Items = []turn.QueueItem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"held": q.Held, "holdPaused": q.HoldPaused, "items": q.Items})
}

// holdQueue holds the queue (no queued input or paused turn starts), or
// with ?only=paused holds only paused turns; or releases both.
func (a *App) holdQueue(hold bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		only := r.URL.Query().Get("only")
		if only != "" && (only != "paused" || !hold) {
			writeError(w, http.StatusBadRequest, `only=paused holds paused turns alone; release lets everything go`)
			return
		}
		if hold {
			a.turns.Hold(only == "paused")
		} else {
			a.turns.Release()
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// conversations is GET /api/internal/conversations?since=RFC3339: the
// conversations made since then, for a test to find the one a heartbeat
// started.
func (a *App) conversations(w http.ResponseWriter, r *http.Request) {
	since, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("since"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "since must be an RFC 3339 time: "+err.Error())
		return
	}
	list, err := a.st.ConversationsSince(r.Context(), since)
	if err != nil {
		a.internalError(w, err)
		return
	}
	if list == nil {
		list = []store.Started{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}
