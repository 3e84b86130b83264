package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
)

// app is an app's public routes: POST /api/things makes a thing, DELETE
// /api/things/{id} removes it; it records each request. A thing named
// "bad" is refused.
type app struct {
	mu    sync.Mutex
	calls []string
	next  int
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, r.Method+" "+r.URL.Path)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/things":
		var in struct{ Name string }
		json.NewDecoder(r.Body).Decode(&in)
		if in.Name == "bad" {
			http.Error(w, "no", http.StatusUnprocessableEntity)
			return
		}
		a.next++
		json.NewEncoder(w).Encode(map[string]string{"id": fmt.Sprintf("thing-%d", a.next)})
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/api/things/"):
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func thing(id, name string, needs ...string) catalog.Step {
	return catalog.Step{ID: id, Needs: needs,
		Setup: func(ctx context.Context, routes *catalog.Routes, got map[string]catalog.State) (catalog.State, error) {
			for _, n := range needs {
				if got[n]["id"] == "" {
					return nil, fmt.Errorf("%s has no state", n)
				}
			}
			var out struct{ ID string }
			if err := routes.Do(ctx, http.MethodPost, "/api/things", map[string]string{"name": name}, &out); err != nil {
				return nil, err
			}
			return catalog.State{"id": out.ID}, nil
		},
		Teardown: func(ctx context.Context, routes *catalog.Routes, s catalog.State) error {
			return routes.Do(ctx, http.MethodDelete, "/api/things/"+s["id"], nil, nil)
		},
	}
}

// The third of four steps fails: the two before it are torn down, last
// first, through the app's routes, and the fourth never starts.
func TestAFailedStepTearsDownWhatCameBeforeInReverse(t *testing.T) {
	a := &app{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	var r catalog.Registry
	for _, s := range []catalog.Step{thing("user", "ann"), thing("channel", "eng", "user"), thing("thread", "bad", "channel"), thing("reply", "hi", "thread")} {
		if err := r.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	routes, err := catalog.NewRoutes(srv.URL, srv.Client(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), routes, "reply")
	var se *catalog.SetupError
	if !errors.As(err, &se) || se.Step != "thread" || se.Teardown != nil || !strings.Contains(err.Error(), "422") {
		t.Fatalf("err %v", err)
	}
	want := []string{"POST /api/things", "POST /api/things", "POST /api/things", "DELETE /api/things/thing-2", "DELETE /api/things/thing-1"}
	if !slices.Equal(a.calls, want) {
		t.Fatalf("calls %q; want %q", a.calls, want)
	}
}

func TestStepsRunInTheOrderTheyNeedAndTearDownInReverse(t *testing.T) {
	a := &app{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	var r catalog.Registry
	r.Add(thing("reply", "hi", "thread", "user"))
	r.Add(thing("thread", "t", "user"))
	r.Add(thing("user", "ann"))
	routes, _ := catalog.NewRoutes(srv.URL, srv.Client(), nil)
	s, err := r.Run(context.Background(), routes, "reply")
	if err != nil {
		t.Fatal(err)
	}
	if s.State("user")["id"] != "thing-1" || s.State("thread")["id"] != "thing-2" || s.State("reply")["id"] != "thing-3" {
		t.Fatalf("states %v %v %v", s.State("user"), s.State("thread"), s.State("reply"))
	}
	if err := s.Teardown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := a.calls[3:]; !slices.Equal(got, []string{"DELETE /api/things/thing-3", "DELETE /api/things/thing-2", "DELETE /api/things/thing-1"}) {
		t.Fatalf("teardown %q", got)
	}
	// Torn down once: a second Teardown has nothing left.
	if err := s.Teardown(context.Background()); err != nil || len(a.calls) != 6 {
		t.Fatalf("a second teardown: %v, %d calls", err, len(a.calls))
	}
}

func TestRegistryMistakesAreNamed(t *testing.T) {
	var r catalog.Registry
	r.Add(thing("a", "x", "b"))
	r.Add(thing("b", "y", "a"))
	r.Add(thing("c", "z", "nowhere"))
	if err := r.Add(thing("a", "again")); err == nil || !strings.Contains(err.Error(), "step a is registered twice") {
		t.Fatalf("a second a: %v", err)
	}
	routes, _ := catalog.NewRoutes("http://127.0.0.1:1", nil, nil)
	for ids, want := range map[string]string{"a": "steps need each other: a -> b -> a", "c": "step c needs nowhere, which is not registered", "d": "no step d"} {
		if _, err := r.Run(context.Background(), routes, ids); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", ids, err, want)
		}
	}
}

// A step reaches the app through its routes only, and returns ids, never
// a secret.
func TestAStepReachesOnlyTheAppsRoutesAndKeepsNoSecret(t *testing.T) {
	a := &app{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	routes, _ := catalog.NewRoutes(srv.URL, srv.Client(), nil)
	for _, path := range []string{"https://api.github.com/user", "//evil.example/api", "api/things"} {
		if err := routes.Do(context.Background(), http.MethodGet, path, nil, nil); err == nil || !strings.Contains(err.Error(), "is not a route of the app") {
			t.Errorf("%s: %v", path, err)
		}
	}
	token := "ghp_" + strings.Repeat("z", 36)
	var r catalog.Registry
	r.Add(thing("user", "ann"))
	r.Add(catalog.Step{ID: "login", Needs: []string{"user"},
		Setup: func(context.Context, *catalog.Routes, map[string]catalog.State) (catalog.State, error) {
			return catalog.State{"session": token}, nil
		}})
	_, err := r.Run(context.Background(), routes, "login")
	if err == nil || !strings.Contains(err.Error(), `state "session" looks like a secret (rule `) || strings.Contains(err.Error(), token[4:20]) {
		t.Fatalf("err %v", err)
	}
	if last := a.calls[len(a.calls)-1]; last != "DELETE /api/things/thing-1" {
		t.Fatalf("the user step was not torn down: %q", a.calls)
	}
}

func TestUsageIsUnavailableUnlessReported(t *testing.T) {
	prices := pricing.Table{"m": {InputPerMTok: 1, OutputPerMTok: 2}}
	if u := catalog.UsageOf(nil, prices, nil); u.Available || u.CostUSD != nil || u.Reason == "" {
		t.Errorf("no request: %+v", u)
	}
	req := func(u pricing.Usage) fixture.ModelRequest { return fixture.ModelRequest{Usage: u} }
	zero := []fixture.ModelRequest{req(pricing.Usage{Model: "m", InputTokens: 100, OutputTokens: 10}), req(pricing.Usage{Model: "m", Error: "stream_cut: the stream ended"})}
	if u := catalog.UsageOf(zero, prices, nil); u.Available || u.CostUSD != nil || u.InputTokens != 0 || !strings.Contains(u.Reason, "failed before it reported its usage: stream_cut") {
		t.Errorf("a request without usage: %+v", u)
	}
	u := catalog.UsageOf([]fixture.ModelRequest{req(pricing.Usage{Model: "m", InputTokens: 1000, OutputTokens: 100})}, prices, nil)
	if !u.Available || u.CostUSD == nil || *u.CostUSD != (1000*1+100*2)/1e6 || u.Source != "proxy" {
		t.Errorf("reported usage: %+v", u)
	}
	u = catalog.UsageOf([]fixture.ModelRequest{req(pricing.Usage{Model: "other", InputTokens: 1000, OutputTokens: 100})}, prices, nil)
	if !u.Available || u.CostUSD != nil || !strings.Contains(u.Unpriced, `no price for model "other"`) {
		t.Errorf("an unpriced model: %+v", u)
	}
	// A receipt proves what the proxy could not see, even a free run.
	u = catalog.UsageOf(zero, prices, &catalog.Receipt{ID: "rcpt_1", Provider: "anthropic"})
	if !u.Available || u.CostUSD == nil || *u.CostUSD != 0 || u.Source != "receipt" {
		t.Errorf("a receipt: %+v", u)
	}
}

// A step whose state is refused made its data all the same: it is torn
// down with the others; so are the steps before one that panics.
func TestTeardownAfterARefusedStateOrAPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		last catalog.Step
		want []string
	}{
		{"a refused state", catalog.Step{ID: "login", Needs: []string{"user"},
			Setup: func(ctx context.Context, routes *catalog.Routes, _ map[string]catalog.State) (catalog.State, error) {
				var out struct{ ID string }
				if err := routes.Do(ctx, http.MethodPost, "/api/things", map[string]string{"name": "session"}, &out); err != nil {
					return nil, err
				}
				return catalog.State{"id": out.ID, "token": "ghp_" + strings.Repeat("q", 36)}, nil
			},
			Teardown: func(ctx context.Context, routes *catalog.Routes, s catalog.State) error {
				return routes.Do(ctx, http.MethodDelete, "/api/things/"+s["id"], nil, nil)
			}}, []string{"DELETE /api/things/thing-2", "DELETE /api/things/thing-1"}},
		{"a panic", catalog.Step{ID: "login", Needs: []string{"user"},
			Setup: func(context.Context, *catalog.Routes, map[string]catalog.State) (catalog.State, error) {
				panic("a step's bug")
			}}, []string{"DELETE /api/things/thing-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{}
			srv := httptest.NewServer(a)
			defer srv.Close()
			var r catalog.Registry
			r.Add(thing("user", "ann"))
			r.Add(tc.last)
			routes, _ := catalog.NewRoutes(srv.URL, srv.Client(), nil)
			_, err := r.Run(context.Background(), routes, "login")
			if err == nil {
				t.Fatal("no error")
			}
			var deletes []string
			for _, c := range a.calls {
				if strings.HasPrefix(c, "DELETE") {
					deletes = append(deletes, c)
				}
			}
			if !slices.Equal(deletes, tc.want) {
				t.Fatalf("teardown %q; want %q (%v)", deletes, tc.want, err)
			}
		})
	}
}

// A redirect to another origin is not followed: a step's body and
// headers go to the app only.
func TestARedirectElsewhereIsNotFollowed(t *testing.T) {
	var got sync.Mutex
	leaked := false
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Lock()
		leaked = true
		got.Unlock()
	}))
	defer other.Close()
	appSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer appSrv.Close()
	routes, _ := catalog.NewRoutes(appSrv.URL, appSrv.Client(), http.Header{"X-Admin-Token": {"admin-secret"}})
	err := routes.Do(context.Background(), http.MethodPost, "/api/things", map[string]string{"name": "x"}, nil)
	got.Lock()
	defer got.Unlock()
	if err == nil || !strings.Contains(err.Error(), "redirected to another origin") || leaked {
		t.Fatalf("err %v, the other origin was reached: %v", err, leaked)
	}
}
