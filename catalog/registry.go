package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// Step is one piece of a cell's setup: data the app must hold before
// the case runs, made through the app's public routes.
type Step struct {
	ID string
	// Needs are the steps that must be set up first, by id.
	Needs []string
	// Setup makes the data through routes and returns its State: ids and
	// metadata, never a secret's value.
	Setup func(ctx context.Context, routes *Routes, needs map[string]State) (State, error)
	// Teardown removes it, given what Setup returned.
	Teardown func(ctx context.Context, routes *Routes, s State) error
}

// State is what a step made: ids and metadata a later step or the case
// reads.
type State map[string]string

// Registry holds the steps cells may need.
type Registry struct {
	steps map[string]Step
}

// Add registers a step; an id registered twice is an error.
func (r *Registry) Add(s Step) error {
	if r.steps == nil {
		r.steps = map[string]Step{}
	}
	switch {
	case s.ID == "":
		return errors.New("catalog: a step without an id")
	case s.Setup == nil:
		return fmt.Errorf("catalog: step %s has no Setup", s.ID)
	}
	if _, dup := r.steps[s.ID]; dup {
		return fmt.Errorf("catalog: step %s is registered twice", s.ID)
	}
	r.steps[s.ID] = s
	return nil
}

// order returns the steps ids need, each after what it needs, in a
// fixed order; a missing step or a cycle is an error.
func (r *Registry) order(ids []string) ([]string, error) {
	var out []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(id string, path []string) error
	visit = func(id string, path []string) error {
		switch state[id] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("catalog: steps need each other: %s", strings.Join(append(path, id), " -> "))
		}
		s, ok := r.steps[id]
		if !ok {
			if len(path) == 0 {
				return fmt.Errorf("catalog: no step %s", id)
			}
			return fmt.Errorf("catalog: step %s needs %s, which is not registered", path[len(path)-1], id)
		}
		state[id] = 1
		for _, n := range s.Needs {
			if err := visit(n, append(path, id)); err != nil {
				return err
			}
		}
		state[id] = 2
		out = append(out, id)
		return nil
	}
	for _, id := range ids {
		if err := visit(id, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Setup is the steps set up for a cell, in the order they were.
type Setup struct {
	r      *Registry
	routes *Routes
	done   []string
	states map[string]State
}

// SetupError is a step that failed, and what tearing down the steps set
// up before it said.
type SetupError struct {
	Step     string
	Err      error
	Teardown error
}

func (e *SetupError) Error() string {
	s := fmt.Sprintf("catalog: set up %s: %v", e.Step, e.Err)
	if e.Teardown != nil {
		s += fmt.Sprintf("; and tearing down: %v", e.Teardown)
	}
	return s
}

func (e *SetupError) Unwrap() error { return e.Err }

// Run sets up the steps ids and what they need, each after its needs,
// through routes. If one fails, the steps set up before it are torn down
// in reverse order, and the error says which failed.
func (r *Registry) Run(ctx context.Context, routes *Routes, ids ...string) (*Setup, error) {
	order, err := r.order(ids)
	if err != nil {
		return nil, err
	}
	s := &Setup{r: r, routes: routes, states: map[string]State{}}
	for _, id := range order {
		step := r.steps[id]
		needs := map[string]State{}
		for _, n := range step.Needs {
			needs[n] = s.states[n]
		}
		st, err := setUp(ctx, step, routes, needs)
		if err == nil {
			if cerr := st.check(); cerr != nil {
				// It made its data: it is torn down with the rest, with
				// the state it returned, which nothing keeps.
				s.done = append(s.done, id)
				s.states[id] = st
				err = cerr
			}
		}
		if err != nil {
			return nil, &SetupError{Step: id, Err: err, Teardown: s.Teardown(context.WithoutCancel(ctx))}
		}
		s.done = append(s.done, id)
		s.states[id] = st
	}
	return s, nil
}

// setUp runs a step's Setup; a panic in it is its error, so that the
// steps before it are still torn down.
func setUp(ctx context.Context, step Step, routes *Routes, needs map[string]State) (st State, err error) {
	defer func() {
		if r := recover(); r != nil {
			st, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return step.Setup(ctx, routes, needs)
}

// State is what step id returned.
func (s *Setup) State(id string) State { return s.states[id] }

// Teardown tears the steps down in reverse order of their setup, each
// once, going on past a failure; it returns every failure.
func (s *Setup) Teardown(ctx context.Context) error {
	var errs []error
	for len(s.done) > 0 {
		id := s.done[len(s.done)-1]
		s.done = s.done[:len(s.done)-1]
		if td := s.r.steps[id].Teardown; td != nil {
			if err := td(ctx, s.routes, s.states[id]); err != nil {
				errs = append(errs, fmt.Errorf("tear down %s: %w", id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// check refuses a state that holds what looks like a secret: a step
// returns ids and metadata, and its state is kept as evidence.
func (st State) check() error {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		found := append(secrets.Default().Find(st[k]), secrets.Default().Assignment(k, st[k])...)
		if len(found) > 0 {
			return fmt.Errorf("its state %q looks like a secret (rule %s): a step returns ids and metadata, never a secret's value", k, found[0].Rule)
		}
	}
	return nil
}

// Routes is how a step reaches the app: its public routes, on its own
// origin, and nothing else.
type Routes struct {
	base   *url.URL
	client *http.Client
	header http.Header
}

// NewRoutes returns Routes on the app at base (its AppURL), sending
// header with each request (a signed-in user, say).
func NewRoutes(base string, client *http.Client, header http.Header) (*Routes, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("catalog: the app's base URL %q is not an http(s) URL", base)
	}
	if client == nil {
		client = http.DefaultClient
	}
	// A redirect elsewhere is not followed: the step's body and headers
	// are the app's.
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("catalog: the app redirected to another origin, %s: a step reaches the app's routes only", req.URL.Redacted())
		}
		if len(via) >= 10 {
			return errors.New("catalog: ten redirects")
		}
		return nil
	}
	return &Routes{base: u, client: &c, header: header.Clone()}, nil
}

// Do sends method to path (a route of the app, from its root:
// "/api/...") with body as
// JSON, and reads the JSON answer into out. A path that is not a route of
// the app (another host, a scheme) is refused; so is an answer of 400 or
// more, with its status.
func (r *Routes) Do(ctx context.Context, method, path string, body, out any) error {
	ref, err := url.Parse(path)
	if err != nil || ref.IsAbs() || ref.Host != "" || !strings.HasPrefix(path, "/") {
		return fmt.Errorf("catalog: %q is not a route of the app: a step reaches the app by its routes only", path)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base.ResolveReference(ref).String(), rd)
	if err != nil {
		return err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("catalog: %s %s: %w", method, ref.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("catalog: %s %s: %w", method, ref.Path, err)
	}
	if resp.StatusCode >= 400 {
		return fmt.Errorf("catalog: %s %s: %s", method, ref.Path, resp.Status)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("catalog: %s %s: the answer is not JSON: %w", method, ref.Path, err)
		}
	}
	return nil
}
