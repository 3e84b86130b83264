package control

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
)

// streamEvents serves GET /v1/events: every event as one SSE data line,
// the kinds named in ?hold= held until POST /v1/events/{id}/release, or
// for ?holdTimeoutMs= at most (Proxy.HoldTimeout when not given). A
// stream whose client falls eventBuffer events behind is dropped: it ends
// with a comment that says so, and its holds are released.
func (a *api) streamEvents(w http.ResponseWriter, r *http.Request) {
	hold := map[proxy.EventType]bool{}
	for _, name := range strings.Split(r.URL.Query().Get("hold"), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if !proxy.EventType(name).Holdable() {
			badRequest(w, fmt.Sprintf("cannot hold %q: hold takes model_request, tool_request and reply", name), docEvents)
			return
		}
		hold[proxy.EventType(name)] = true
	}
	var limit time.Duration
	if v := r.URL.Query().Get("holdTimeoutMs"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 1 || time.Duration(ms)*time.Millisecond > maxHoldTimeout {
			badRequest(w, fmt.Sprintf("holdTimeoutMs %q: want milliseconds, from 1 to %d", v, maxHoldTimeout.Milliseconds()), docEvents)
			return
		}
		limit = time.Duration(ms) * time.Millisecond
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "the control server cannot stream")
		return
	}

	// Subscribed before the stream opens: a client that starts a request
	// as soon as it sees the opening line misses nothing. Delivery never
	// waits for the client beyond a hold it asked for: a stream that falls
	// eventBuffer events behind (its client stopped reading) is dropped,
	// its holds released, and its requests go on.
	out := make(chan proxy.Event, eventBuffer)
	gone := r.Context().Done()
	rc := http.NewResponseController(w)
	dropped := make(chan struct{})
	var dropOnce sync.Once
	drop := func() {
		dropOnce.Do(func() {
			close(dropped)
			// A write blocked on the stalled client ends within
			// dropGrace: the stream then ends even if it never reads.
			rc.SetWriteDeadline(time.Now().Add(dropGrace))
			if a.p.Log != nil {
				a.p.Log.Warn(fmt.Sprintf("events: dropped a stream that fell %d events behind (its client stopped reading); its holds are released", eventBuffer),
					slog.String("client", r.RemoteAddr))
			}
		})
	}
	unsubscribe := a.p.SubscribeHolding(func(ctx context.Context, ev proxy.Event) {
		select {
		case <-dropped:
			return
		default:
		}
		var released chan struct{}
		if hold[ev.Type] {
			ev.Held = true
			released = a.holdOpen(ev.ID)
			defer a.holdClose(ev.ID)
		}
		select {
		case out <- ev:
		default:
			drop()
			return
		}
		if released != nil {
			select {
			case <-released:
			case <-dropped:
			case <-gone:
			case <-ctx.Done():
			}
		}
	}, limit)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": agentvcr events\n\n")
	flusher.Flush()
	defer unsubscribe()
	for {
		select {
		case <-dropped:
			// Said to a client that reads again, before the stream ends.
			fmt.Fprintf(w, ": agentvcr: dropped: this stream fell %d events behind (its client stopped reading); its holds were released\n\n", eventBuffer)
			rc.Flush()
			return
		default:
		}
		select {
		case <-gone:
			return
		case <-dropped:
		case ev := <-out:
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.ID, ev.Type, b); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// eventBuffer is how many events a stream of GET /v1/events may fall
// behind by before it is dropped.
const eventBuffer = 4096

// dropGrace is how long a dropped stream's last writes may wait for its
// client, which then has the reason it was dropped, before the stream is
// cut off.
const dropGrace = 10 * time.Second

func (a *api) holdOpen(id int64) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.holds == nil {
		a.holds = map[int64]chan struct{}{}
	}
	c := make(chan struct{})
	a.holds[id] = c
	return c
}

func (a *api) holdClose(id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.holds, id)
}

// release lets a held event's request go on; false when no such hold is
// open.
func (a *api) release(id int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.holds[id]
	if ok {
		close(c)
		delete(a.holds, id)
	}
	return ok
}
