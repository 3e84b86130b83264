package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/pricing"
)

// Catalog is every suite, and where the files they name are read from.
type Catalog struct {
	Suites []Suite
	// Sources is where Suite.Sources are read from, the module's root in
	// the example (os.DirFS("."), or an embed.FS a binary carries).
	Sources fs.FS
}

// Suite is one durable testing purpose: a matrix of profiles,
// environments and cases.
type Suite struct {
	// ID names the suite in every cell's id: lower-case letters, digits,
	// '_' and '-'.
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description"`
	// Size is the number of cells the suite declares: for each profile,
	// each environment it supports, each case. A suite whose real size
	// differs is refused.
	Size int `json:"size"`
	// Rank orders suites where they are shown, lowest first; Tier names
	// the gate a suite belongs to (smoke, nightly...).
	Rank int    `json:"rank"`
	Tier string `json:"tier,omitempty"`

	Profiles     []Profile     `json:"profiles"`
	Environments []Environment `json:"environments"`
	Cases        []Case        `json:"cases"`

	// App is the app under test, as a profile and an environment
	// configure it (the environment's App adapts it further).
	App fixture.App `json:"-"`
	// Input is what a case sends the app (default: a Slack mention of
	// the case's Input).
	Input func(c Case) fixture.Input `json:"-"`
	// Grader names how the cases are graded, with a version: a change to
	// the grading changes it, and the fingerprint with it.
	Grader string `json:"grader"`
	// Sources are files, relative to Catalog.Sources, whose contents are
	// part of the fingerprint: the graders', the app's code and prompts.
	// A name may be a pattern ("examples/agent/app/*.go"): its tests are
	// left out.
	Sources []string `json:"sources,omitempty"`
	// Prices price the model requests, for the runner's cost.
	Prices pricing.Table `json:"-"`
	// Steps are the setup steps cases may need (Case.Needs): data made
	// through the app's public routes before a case runs, torn down after.
	Steps *Registry `json:"-"`
}

// Profile is an agent configuration.
type Profile struct {
	ID string `json:"id"`
	// Model is the model id, from the app's own constant; Provider its
	// provider.
	Model    string `json:"model"`
	Provider string `json:"provider"`
	// Credential is the secret the agent needs to call its model.
	Credential Credential `json:"credential"`
	// SupportedEnvironments are the environments the profile runs in, by
	// id; empty means every one of the suite's.
	SupportedEnvironments []string `json:"supportedEnvironments,omitempty"`
	// Runtime is what a run of the profile is expected to report about
	// itself (the model it used...), for the runtime matcher.
	Runtime map[string]string `json:"runtime,omitempty"`
	// Options makes the agent's options for the profile: the
	// environment a fixture.App (or fixture.Fixture.Agent) is given. It
	// must be deterministic: its result is part of the fingerprint.
	Options func() map[string]string `json:"-"`
}

// Environment is how and where the app runs.
type Environment struct {
	ID string `json:"id"`
	// Driver names how the app is started (in-process, process...).
	Driver string `json:"driver"`
	// Credentials are the secrets the environment needs.
	Credentials []Credential `json:"credentials,omitempty"`
	// Deadline bounds each attempt of a cell (the agent must be idle by
	// then).
	Deadline time.Duration `json:"deadline"`
	// Metadata describes the environment to the environment matcher.
	Metadata map[string]string `json:"metadata,omitempty"`

	// The contract: Setup runs once before the environment's first cell
	// of a run, Probe before each cell (an error fails the cell), Cleanup
	// once after the last, also when Setup failed. Each may be nil.
	Setup   func(ctx context.Context) error `json:"-"`
	Probe   func(ctx context.Context) error `json:"-"`
	Cleanup func(ctx context.Context) error `json:"-"`
	// App adapts the suite's app to the environment: runs it as a
	// process, say. Nil runs it as it is.
	App func(ctx context.Context, app fixture.App) fixture.App `json:"-"`
}

// Case is one input and what its answer must show.
type Case struct {
	ID    string   `json:"id"`
	Input string   `json:"input"`
	Tags  []string `json:"tags,omitempty"`
	// Needs are the suite's Steps the case needs set up first.
	Needs []string `json:"needs,omitempty"`
	// Expect are the matchers a run must pass.
	Expect []Matcher `json:"expect"`
}

// HasTag says whether the case carries tag.
func (c Case) HasTag(tag string) bool { return slices.Contains(c.Tags, tag) }

// Credential is a secret the agent or the environment needs, by
// reference: Env names the variable the app gets it in, Ref where it is
// kept. A definition never holds the secret itself.
type Credential struct {
	Env string    `json:"env"`
	Ref SecretRef `json:"ref"`
}

// SecretRef names a secret: {type: "secret_ref", secretId, version:
// "latest"}.
type SecretRef struct {
	Type     string `json:"type"`
	SecretID string `json:"secretId"`
	Version  string `json:"version"`
}

// Secret returns the reference to the latest version of secret id.
func Secret(id string) SecretRef {
	return SecretRef{Type: "secret_ref", SecretID: id, Version: "latest"}
}

// Cell is one execution: a case of a suite, run with a profile in an
// environment.
type Cell struct {
	ID          string
	Suite       *Suite
	Profile     *Profile
	Environment *Environment
	Case        *Case
}

// idPattern is a part of a cell id: the parts are joined by '.'.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Cells returns the suite's cells, profile by profile, environment by
// environment, case by case.
func (s *Suite) Cells() []Cell {
	var out []Cell
	for i := range s.Profiles {
		p := &s.Profiles[i]
		for j := range s.Environments {
			e := &s.Environments[j]
			if !p.supports(e.ID) {
				continue
			}
			for k := range s.Cases {
				c := &s.Cases[k]
				out = append(out, Cell{ID: strings.Join([]string{s.ID, p.ID, e.ID, c.ID}, "."), Suite: s, Profile: p, Environment: e, Case: c})
			}
		}
	}
	return out
}

func (p *Profile) supports(env string) bool {
	return len(p.SupportedEnvironments) == 0 || slices.Contains(p.SupportedEnvironments, env)
}

// Error is what is wrong with a catalog's definition: every problem, each
// naming its suite and field.
type Error struct{ Problems []Problem }

// Problem is one thing wrong with a definition. It never holds a value
// that looks like a secret: the rule that found it says what it is.
type Problem struct {
	Suite string `json:"suite"`
	Field string `json:"field"`
	What  string `json:"what"`
}

func (p Problem) String() string {
	if p.Field == "" {
		return fmt.Sprintf("suite %s: %s", p.Suite, p.What)
	}
	return fmt.Sprintf("suite %s: %s: %s", p.Suite, p.Field, p.What)
}

func (e *Error) Error() string {
	var lines []string
	for _, p := range e.Problems {
		lines = append(lines, p.String())
	}
	return "catalog: " + strings.Join(lines, "; ")
}

// ErrSizeMismatch is among the problems of a suite whose real size
// differs from its declared one (errors.Is on the *Error).
var ErrSizeMismatch = errors.New("size mismatch")

// Is lets errors.Is find ErrSizeMismatch in an *Error.
func (e *Error) Is(target error) bool {
	if target != ErrSizeMismatch {
		return false
	}
	return slices.ContainsFunc(e.Problems, func(p Problem) bool { return p.Field == "size" })
}

// Validate says everything wrong with the catalog: ids, sizes,
// unsupported environments named, credentials that are not secret
// references, definition fields that look like secrets, matchers that
// cannot run, duplicate cell ids.
func (c *Catalog) Validate() error {
	var ps []Problem
	var flagged []string // values that look like secrets: no problem quotes them
	seenSuite := map[string]bool{}
	cells := map[string]string{}
	for i := range c.Suites {
		s := &c.Suites[i]
		bad := func(field, format string, args ...any) {
			ps = append(ps, Problem{Suite: s.ID, Field: field, What: fmt.Sprintf(format, args...)})
		}
		if !idPattern.MatchString(s.ID) {
			bad("id", "%q: want lower-case letters, digits, '_' and '-'", s.ID)
		}
		if seenSuite[s.ID] {
			bad("id", "two suites have this id")
		}
		seenSuite[s.ID] = true
		if s.Grader == "" {
			bad("grader", "empty: name the grading and its version, so that changing it changes the fingerprint")
		}
		if s.App.Handler == nil && len(s.App.Command) == 0 {
			bad("app", "neither a Handler nor a Command")
		}
		envs := map[string]bool{}
		for j, e := range s.Environments {
			f := fmt.Sprintf("environments[%d]", j)
			if !idPattern.MatchString(e.ID) || envs[e.ID] {
				bad(f+".id", "%q: want a unique id of lower-case letters, digits, '_' and '-'", e.ID)
			}
			envs[e.ID] = true
			if e.Driver == "" {
				bad(f+".driver", "empty: name how the app is started")
			}
			if e.Deadline <= 0 {
				bad(f+".deadline", "want a positive duration")
			}
			for k, cr := range e.Credentials {
				ps = append(ps, cr.problems(s.ID, fmt.Sprintf("%s.credentials[%d]", f, k))...)
			}
		}
		profiles := map[string]bool{}
		for j, p := range s.Profiles {
			f := fmt.Sprintf("profiles[%d]", j)
			if !idPattern.MatchString(p.ID) || profiles[p.ID] {
				bad(f+".id", "%q: want a unique id of lower-case letters, digits, '_' and '-'", p.ID)
			}
			profiles[p.ID] = true
			if p.Model == "" || p.Provider == "" {
				bad(f, "a profile names its model and provider")
			}
			ps = append(ps, p.Credential.problems(s.ID, f+".credential")...)
			for _, e := range p.SupportedEnvironments {
				if !envs[e] {
					bad(f+".supportedEnvironments", "%q is not one of the suite's environments", e)
				}
			}
		}
		cases := map[string]bool{}
		for j, cs := range s.Cases {
			f := fmt.Sprintf("cases[%d]", j)
			if !idPattern.MatchString(cs.ID) || cases[cs.ID] {
				bad(f+".id", "%q: want a unique id of lower-case letters, digits, '_' and '-'", cs.ID)
			}
			cases[cs.ID] = true
			if len(cs.Expect) == 0 {
				bad(f+".expect", "no matcher: a case says what its answer must show")
			}
			if len(cs.Needs) > 0 {
				if s.Steps == nil {
					bad(f+".needs", "the suite has no Steps")
				} else if _, err := s.Steps.order(cs.Needs); err != nil {
					bad(f+".needs", "%v", strings.TrimPrefix(err.Error(), "catalog: "))
				}
			}
			for k, m := range cs.Expect {
				if err := m.valid(); err != nil {
					bad(fmt.Sprintf("%s.expect[%d]", f, k), "%v", err)
				}
			}
		}
		got := s.Cells()
		if len(got) != s.Size {
			bad("size", "declared %d cells, has %d (%d profiles × their environments × %d cases): declare the new size with the change", s.Size, len(got), len(s.Profiles), len(s.Cases))
		}
		for _, cl := range got {
			if other, dup := cells[cl.ID]; dup {
				bad("cells", "cell %s is also suite %s's", cl.ID, other)
			}
			cells[cl.ID] = s.ID
		}
		for j, p := range s.Profiles {
			if p.Options != nil && !maps.Equal(p.Options(), p.Options()) {
				bad(fmt.Sprintf("profiles[%d].options", j), "Options gives other options each call: the fingerprint needs them the same")
			}
		}
		found, values := secretsIn(s)
		ps = append(ps, found...)
		flagged = append(flagged, values...)
		if _, err := c.sourceFiles(s); err != nil {
			bad("sources", "%v", strings.TrimPrefix(err.Error(), "catalog: suite "+s.ID+": "))
		}
	}
	if len(ps) > 0 {
		return &Error{Problems: scrub(ps, flagged)}
	}
	return nil
}

// scrub takes out of every problem each value that looks like a secret:
// the ones the check found, and any other the detectors see (an id, a
// version or a pattern that is a secret is quoted by its own problem).
func scrub(ps []Problem, values []string) []Problem {
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	clean := func(s string) string {
		for _, v := range values {
			if len(v) >= 4 {
				s = strings.ReplaceAll(s, v, "<<redacted>>")
			}
		}
		return secrets.Default().Redact(s, func(secrets.Match) string { return "<<redacted>>" })
	}
	for i := range ps {
		ps[i].Suite, ps[i].Field, ps[i].What = clean(ps[i].Suite), clean(ps[i].Field), clean(ps[i].What)
	}
	return ps
}

func (cr Credential) problems(suite, field string) []Problem {
	var ps []Problem
	bad := func(format string, args ...any) {
		ps = append(ps, Problem{Suite: suite, Field: field, What: fmt.Sprintf(format, args...)})
	}
	if cr.Env == "" {
		bad("no env: name the variable the app reads the secret from")
	}
	switch {
	case cr.Ref.Type != "secret_ref":
		bad(`a credential is {"type": "secret_ref", "secretId", "version": "latest"}, never a value`)
	case cr.Ref.SecretID == "":
		bad("a secret_ref without a secretId")
	case cr.Ref.Version != "latest":
		bad("secret_ref version %q: want \"latest\"", cr.Ref.Version)
	}
	return ps
}

// definition is the suite as data: what the fingerprint is of, and what
// the secret check reads. The app is in it by its configuration: its
// environment, command and secrets (its Handler is code: Sources).
func (s *Suite) definition() (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("the suite is not data: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	profiles, _ := doc["profiles"].([]any)
	for i, p := range s.Profiles {
		if p.Options != nil && i < len(profiles) {
			profiles[i].(map[string]any)["options"] = stringMap(p.Options())
		}
	}
	command := []any{}
	for _, c := range s.App.Command {
		command = append(command, c)
	}
	doc["app"] = map[string]any{"name": s.App.Name, "env": stringMap(s.App.Env), "command": command,
		"slackSigningSecret": s.App.SlackSigningSecret, "schedulerSecret": s.App.SchedulerSecret, "adminSecret": s.App.AdminSecret}
	return doc, nil
}

func stringMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
