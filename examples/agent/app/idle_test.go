package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptrace"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/proxy"
)

type idleAnswer struct {
	Idle    bool
	Running int
}

// The idle route's waitMs holds the answer until the agent is idle: asked
// while a turn waits for its router at the proxy, which lets it go once
// the question is sent, it answers idle, once the turn and the title are
// over.
func TestTheIdleRouteWaitsForTheAgent(t *testing.T) {
	f, m, release := startHeldTurn(t, "idle-1", "Did deploy 42 go out?")
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { release() }})
	req, _ := http.NewRequestWithContext(ctx, "GET", f.AppURL()+"/api/internal/idle?waitMs=25000", nil)
	req.Header = admin()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st idleAnswer
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !st.Idle {
		t.Fatalf("the idle route answered %+v (%v); want it to wait until the agent is idle", st, err)
	}
	if got := m.Calls(agent); len(got) != 1 || !got[0].Done {
		t.Fatalf("idle before the turn's model call was over: %+v", got)
	}
}

// Past waitMs the route answers what keeps the agent busy; a waitMs out
// of range is refused.
func TestTheIdleRouteWaitsNoLongerThanAsked(t *testing.T) {
	f, _, release := startHeldTurn(t, "idle-2", "Did it go out?")
	began := time.Now()
	var st idleAnswer
	if code := call(t, f, "GET", "/api/internal/idle?waitMs=50", admin(), nil, &st); code != 200 || st.Idle || st.Running != 1 {
		t.Fatalf("while the turn waits at the proxy: %d %+v; want busy, one running", code, st)
	}
	if waited := time.Since(began); waited < 50*time.Millisecond {
		t.Fatalf("the route answered busy after %s; want it to wait the 50 ms asked", waited)
	}
	for _, bad := range []string{"x", "-1", "60001", "1.5"} {
		if code := call(t, f, "GET", "/api/internal/idle?waitMs="+bad, admin(), nil, nil); code != 400 {
			t.Errorf("waitMs=%s: %d; want 400", bad, code)
		}
	}
	release()
	waitIdle(t, f)
}

// startHeldTurn starts the agent, scripts one web turn and posts its
// message, and returns once the turn's router request is held at the
// proxy, where it stays until release is called.
func startHeldTurn(t *testing.T, key, text string) (f *fixture.Fixture, m *fakeai.Model, release func()) {
	t.Helper()
	f, _ = newAgent(t, nil)
	m = f.Model()
	m.Respond(router, routed())
	m.Respond(titler, fakeai.Text("Deploys"))
	m.Respond(agent, fakeai.Text("It went out."))
	waitHeld, release := holdRouter(t, f)
	if code := call(t, f, "POST", "/api/conversations", as(fixture.AuthorEmail),
		map[string]string{"idempotencyKey": key, "message": text}, nil); code != 200 {
		t.Fatalf("POST /api/conversations: %d", code)
	}
	waitHeld()
	return f, m, release
}

// holdRouter holds the router's model request at the proxy until release
// is called; waitHeld waits, within 30 s, until it is there.
func holdRouter(t *testing.T, f *fixture.Fixture) (waitHeld, release func()) {
	t.Helper()
	held, let := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	stop := f.Proxy().Subscribe(func(ctx context.Context, ev proxy.Event) {
		if ev.Type == proxy.EventModelRequest && ev.Purpose == "structured" {
			once.Do(func() { close(held) })
			select {
			case <-let:
			case <-ctx.Done():
			}
		}
	})
	t.Cleanup(stop)
	waitHeld = func() {
		t.Helper()
		select {
		case <-held:
		case <-time.After(30 * time.Second):
			t.Fatal("the router's request did not reach the proxy")
		}
	}
	return waitHeld, func() { releaseOnce.Do(func() { close(let) }) }
}
