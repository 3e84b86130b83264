package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/sanitize"
)

// Resolver finds a secret's value by its reference.
type Resolver interface {
	// Resolve returns the secret's value, or "" when it is not there.
	Resolve(ctx context.Context, ref SecretRef) (string, error)
}

// EnvResolver resolves a reference from the environment variable its
// secretId names: getenv is os.Getenv in a program.
type EnvResolver func(string) string

// Resolve returns the variable's value.
func (g EnvResolver) Resolve(_ context.Context, ref SecretRef) (string, error) {
	return g(ref.SecretID), nil
}

// CredentialError is a cell's credential that cannot be found: the cell
// fails with it; it is never skipped.
type CredentialError struct {
	Cell string
	Env  string
	Ref  SecretRef
	Err  error // the resolver's, or nil when the secret is not there
}

func (e *CredentialError) Error() string {
	s := fmt.Sprintf("cell %s needs credential %s (secret_ref %s, version %s), which is not available", e.Cell, e.Env, e.Ref.SecretID, e.Ref.Version)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *CredentialError) Unwrap() error { return e.Err }

// Is makes a CredentialError an evals.ErrMissingCredential: the user's
// setup to fix, which evalcmd says before a run starts.
func (e *CredentialError) Is(target error) bool { return target == evals.ErrMissingCredential }

// Select returns the cells of suite, and of profile and environment when
// they are not "", after validating the catalog. Asking for what does
// not exist is an error.
func (c *Catalog) Select(suite, profile, environment string) ([]Cell, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var out []Cell
	found := map[string]bool{}
	for i := range c.Suites {
		s := &c.Suites[i]
		if suite != "" && s.ID != suite {
			continue
		}
		found["suite"] = true
		for _, cl := range s.Cells() {
			if profile != "" && cl.Profile.ID != profile || environment != "" && cl.Environment.ID != environment {
				continue
			}
			out = append(out, cl)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("catalog: no cell of suite %q, profile %q, environment %q (the catalog program's --list lists them)", or(suite, "any"), or(profile, "any"), or(environment, "any"))
	}
	return out, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Plan is cells as evals for the eval runner: one eval per suite,
// profile and environment, named <suite>.<profile>.<environment>, whose
// case ids make the cells' ids.
type Plan struct {
	setups   sync.Map // *fixture.Fixture -> *Setup: each attempt's steps
	cat      *Catalog
	cells    []Cell
	resolve  Resolver
	opts     []fixture.Option
	mu       sync.Mutex
	setUp    []*Environment // in the order they were set up
	setupErr map[*Environment]error
}

// NewPlan plans cells (from Select), whose credentials resolve finds;
// opts are added to each attempt's fixture (a test's stand-in gateway).
func (c *Catalog) NewPlan(cells []Cell, resolve Resolver, opts ...fixture.Option) *Plan {
	return &Plan{cat: c, cells: cells, resolve: resolve, opts: opts, setupErr: map[*Environment]error{}}
}

// Setup runs the Setup of each environment the cells use, once. An
// environment whose Setup fails fails its cells; the others run.
func (p *Plan) Setup(ctx context.Context) {
	for _, cl := range p.cells {
		e := cl.Environment
		p.mu.Lock()
		_, done := p.setupErr[e]
		p.mu.Unlock()
		if done {
			continue
		}
		var err error
		if e.Setup != nil {
			err = e.Setup(ctx)
		}
		p.mu.Lock()
		p.setupErr[e] = err
		p.setUp = append(p.setUp, e)
		p.mu.Unlock()
	}
}

// Cleanup runs the Cleanup of each environment set up, last first, also
// of one whose Setup failed.
func (p *Plan) Cleanup(ctx context.Context) error {
	p.mu.Lock()
	envs := slices.Clone(p.setUp)
	p.setUp = nil
	p.mu.Unlock()
	var errs []error
	for i := len(envs) - 1; i >= 0; i-- {
		if c := envs[i].Cleanup; c != nil {
			if err := c(ctx); err != nil {
				errs = append(errs, fmt.Errorf("catalog: clean up environment %s: %w", envs[i].ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Check resolves the credentials of the plan's cells, and returns a
// *CredentialError (an evals.ErrMissingCredential) for the first cell of
// each suite, profile and environment that lacks one, joined: a run
// would fail each of their attempts on it, so a program says so before
// it sets anything up.
func (p *Plan) Check(ctx context.Context) error {
	var errs []error
	seen := map[string]bool{}
	for _, cl := range p.cells {
		group := cl.Suite.ID + "." + cl.Profile.ID + "." + cl.Environment.ID
		if seen[group] {
			continue
		}
		seen[group] = true
		if _, missing, err := p.credentials(ctx, cl.Profile, cl.Environment); len(missing) > 0 {
			errs = append(errs, &CredentialError{Cell: cl.ID, Env: missing[0].Env, Ref: missing[0].Ref, Err: err})
		}
	}
	return errors.Join(errs...)
}

// credentials resolves the credentials a profile and an environment
// need: the values by variable, those missing, and the resolver's last
// error.
func (p *Plan) credentials(ctx context.Context, prof *Profile, env *Environment) (values map[string]string, missing []Credential, err error) {
	values = map[string]string{}
	for _, cr := range append([]Credential{prof.Credential}, env.Credentials...) {
		v, rerr := p.resolve.Resolve(ctx, cr.Ref)
		if rerr != nil || v == "" {
			missing = append(missing, cr)
			err = rerr
			continue
		}
		values[cr.Env] = v
	}
	return values, missing, err
}

// Evals returns the plan's evals.
func (p *Plan) Evals(ctx context.Context) ([]evals.Eval, error) {
	type group struct {
		name  string
		cells []Cell
	}
	var groups []*group
	byName := map[string]*group{}
	for _, cl := range p.cells {
		name := cl.Suite.ID + "." + cl.Profile.ID + "." + cl.Environment.ID
		g := byName[name]
		if g == nil {
			g = &group{name: name}
			byName[name] = g
			groups = append(groups, g)
		}
		g.cells = append(g.cells, cl)
	}
	var out []evals.Eval
	for _, g := range groups {
		e, err := p.eval(ctx, g.name, g.cells)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// eval is the eval of one suite, profile and environment's cells.
func (p *Plan) eval(ctx context.Context, name string, cells []Cell) (evals.Eval, error) {
	first := cells[0]
	s, prof, env := first.Suite, first.Profile, first.Environment
	fingerprint, err := p.cat.Fingerprint(s)
	if err != nil {
		return evals.Eval{}, err
	}
	byCase := map[string]Cell{}
	var cases []evals.Case
	for i, cl := range cells {
		input, _ := json.Marshal(cl.Case.Input)
		cases = append(cases, evals.Case{ID: cl.Case.ID, Input: input, Tags: cl.Case.Tags, File: "suite " + s.ID, Line: i + 1})
		byCase[cl.Case.ID] = cl
	}
	// The app: the suite's, with the profile's options and the
	// credentials it and the environment need, as the environment runs it.
	app := s.App
	app.Env = map[string]string{}
	for k, v := range s.App.Env {
		app.Env[k] = v
	}
	if prof.Options != nil {
		for k, v := range prof.Options() {
			app.Env[k] = v
		}
	}
	values, missing, resolveErr := p.credentials(ctx, prof, env)
	var known []string // the credentials' values: no evidence holds them
	for k, v := range values {
		app.Env[k] = v
		known = append(known, v)
	}
	if env.App != nil {
		p.mu.Lock()
		setupErr, setUp := p.setupErr[env]
		p.mu.Unlock()
		if !setUp || setupErr == nil {
			app = env.App(ctx, app)
		}
	}
	input := s.Input
	if input == nil {
		input = func(c Case) fixture.Input { return fixture.SlackMention(c.Input) }
	}
	return evals.Eval{
		Name:        name,
		Fingerprint: fingerprint,
		App:         app,
		Cases:       func() ([]evals.Case, error) { return cases, nil },
		Prices:      s.Prices,
		Preflight: func(ctx context.Context, c evals.Case) error {
			cl := byCase[c.ID]
			if len(missing) > 0 {
				return &CredentialError{Cell: cl.ID, Env: missing[0].Env, Ref: missing[0].Ref, Err: resolveErr}
			}
			p.mu.Lock()
			setupErr := p.setupErr[env]
			p.mu.Unlock()
			if setupErr != nil {
				return fmt.Errorf("environment %s did not set up: %w", env.ID, setupErr)
			}
			if env.Probe != nil {
				if err := env.Probe(ctx); err != nil {
					return fmt.Errorf("environment %s: probe: %w", env.ID, err)
				}
			}
			return nil
		},
		Setup: func(ctx context.Context, f *fixture.Fixture, c evals.Case) error {
			needs := byCase[c.ID].Case.Needs
			if len(needs) == 0 {
				return nil
			}
			header := http.Header{}
			if app.Routes.UserHeader != "" {
				header.Set(app.Routes.UserHeader, fixture.AuthorEmail)
			}
			routes, err := NewRoutes(f.AppURL(), nil, header)
			if err != nil {
				return err
			}
			setup, err := s.Steps.Run(ctx, routes, needs...)
			if err != nil {
				return err
			}
			p.setups.Store(f, setup)
			return nil
		},
		Teardown: func(ctx context.Context, f *fixture.Fixture, c evals.Case) error {
			setup, ok := p.setups.LoadAndDelete(f)
			if !ok {
				return nil
			}
			return setup.(*Setup).Teardown(ctx)
		},
		Options: append([]fixture.Option{fixture.IdleTimeout(env.Deadline)}, p.opts...),
		Input:   func(c evals.Case) fixture.Input { return input(*byCase[c.ID].Case) },
		Grade: func(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
			cl := byCase[c.ID]
			var steps map[string]State
			if setup, ok := p.setups.Load(r.Fixture); ok {
				steps = setup.(*Setup).states
			}
			return grade(ctx, r, cl, fingerprint, steps, known)
		},
		Metrics: []evals.Metric{
			{ID: "pass", Kind: evals.Binary, Description: "every matcher of the case passed"},
			{ID: "matched", Kind: evals.Score, Description: "the share of the case's matchers that passed"},
		},
	}, nil
}

// grade checks a cell's matchers on what its run showed, and keeps the
// evidence, sanitized, in the attempt's trace directory.
func grade(ctx context.Context, r evals.Result, cl Cell, fingerprint string, steps map[string]State, known []string) (map[string]float64, error) {
	o, err := observe(ctx, r, cl)
	if err != nil {
		return nil, err
	}
	// The case's matchers, and what the profile's runs must report about
	// themselves.
	matchers := slices.Clone(cl.Case.Expect)
	for _, k := range slices.Sorted(maps.Keys(cl.Profile.Runtime)) {
		matchers = append(matchers, Runtime(k, cl.Profile.Runtime[k]))
	}
	var results []Result
	passed := 0
	for _, m := range matchers {
		res := m.Check(o)
		if res.Pass {
			passed++
		}
		results = append(results, res)
	}
	u := UsageOf(r.Conversation.ModelRequests, cl.Suite.Prices, nil)
	ev := evidence{Cell: cl.ID, Fingerprint: fingerprint, Conversation: r.Conversation.ID, Results: results, Usage: u,
		Runtime: o.Runtime, Environment: o.Environment, APIState: o.Document, Steps: steps}
	if err := writeEvidence(r.TraceDir, ev, known); err != nil {
		return nil, err
	}
	pass := 0.0
	if passed == len(matchers) {
		pass = 1
	}
	return map[string]float64{"pass": pass, "matched": float64(passed) / float64(len(matchers))}, nil
}

// observe reads what the cell's run showed: the replies and turns the
// app's reporting API gives, the models the proxy saw, and the
// reporting API's document.
func observe(ctx context.Context, r evals.Result, cl Cell) (Observation, error) {
	conv := r.Conversation
	o := Observation{Messages: conv.ReplyTexts(), State: "none", Runtime: map[string]string{}, Environment: map[string]string{"driver": cl.Environment.Driver}}
	for k, v := range cl.Environment.Metadata {
		o.Environment[k] = v
	}
	for _, t := range conv.Turns {
		o.Turns = append(o.Turns, t.Status)
	}
	switch {
	case slices.Contains(o.Turns, "failed"):
		o.State = "failed"
	case len(o.Turns) > 0 && !slices.ContainsFunc(o.Turns, func(s string) bool { return s != "succeeded" }):
		o.State = "succeeded"
	case len(o.Turns) > 0:
		o.State = o.Turns[len(o.Turns)-1]
	}
	var models []string
	for _, m := range conv.ModelRequests {
		if m.Purpose == "agent" && !slices.Contains(models, m.Model) {
			models = append(models, m.Model)
		}
	}
	slices.Sort(models)
	if len(models) > 0 {
		o.Runtime["model"] = strings.Join(models, ",")
	}
	app := cl.Suite.App
	if app.Routes.Report != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.Fixture.AppURL()+strings.ReplaceAll(app.Routes.Report, "{id}", conv.ID), nil)
		if err != nil {
			return o, err
		}
		if app.AdminSecret != "" {
			req.Header.Set("Authorization", "Bearer "+app.AdminSecret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return o, fmt.Errorf("the app's report of %s: %w", conv.ID, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err != nil || resp.StatusCode != http.StatusOK {
			return o, fmt.Errorf("the app's report of %s: %s %v", conv.ID, resp.Status, err)
		}
		o.Document = b
	}
	return o, nil
}

// evidence is what a cell's run is judged on, kept beside its trace.
type evidence struct {
	Cell         string            `json:"cell"`
	Fingerprint  string            `json:"fingerprint"`
	Conversation string            `json:"conversation"`
	Results      []Result          `json:"results"`
	Usage        Usage             `json:"usage"`
	Runtime      map[string]string `json:"runtime"`
	Environment  map[string]string `json:"environment"`
	// APIState is the app's reporting API's document of the
	// conversation, as the matchers read it.
	APIState json.RawMessage `json:"apiState,omitempty"`
	// Steps are what the case's setup steps made: ids and metadata.
	Steps map[string]State `json:"steps,omitempty"`
}

// writeEvidence sanitizes ev and writes it as evidence.json in dir: what
// a run saw may hold the people and secrets a tool returned, and the
// run's own credentials (known), which go first, whatever their shape.
func writeEvidence(dir string, ev evidence, known []string) error {
	if dir == "" {
		return nil
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	for _, v := range known {
		quoted, _ := json.Marshal(v)
		inner := quoted[1 : len(quoted)-1] // as it stands inside a JSON string
		if len(inner) >= 4 {
			raw = bytes.ReplaceAll(raw, inner, []byte("<<redacted>>"))
		}
	}
	s, err := sanitize.New(sanitize.Options{})
	if err != nil {
		return err
	}
	clean, err := s.SanitizeValue(raw, "evidence.json")
	if err != nil {
		return fmt.Errorf("evidence of %s: %w", ev.Cell, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "evidence.json"), 0o644, func(w io.Writer) error {
		_, err := w.Write(clean)
		return err
	})
}
