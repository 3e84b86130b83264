package catalog_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/fixture"
)

// small is a valid catalog of one suite: two profiles, one of them in
// one environment only, two environments, two cases: 3 × 2 = 6 cells.
func small() *catalog.Catalog {
	cred := catalog.Credential{Env: "AI_GATEWAY_API_KEY", Ref: catalog.Secret("AI_GATEWAY_API_KEY")}
	app := fixture.App{Name: "app", Handler: func(context.Context, map[string]string) (http.Handler, func(), error) {
		return http.NotFoundHandler(), nil, nil
	}}
	return &catalog.Catalog{
		Sources: fstest.MapFS{"grade.go": {Data: []byte("package grade // v1\n")}},
		Suites: []catalog.Suite{{
			ID: "basics", Label: "Basics", Size: 6, Rank: 1, Grader: "matchers/v1", Sources: []string{"grade.go"}, App: app,
			Profiles: []catalog.Profile{
				{ID: "big", Model: "anthropic/claude-sonnet-4.5", Provider: "anthropic", Credential: cred,
					Options: func() map[string]string { return map[string]string{"AGENT_MODEL": "anthropic/claude-sonnet-4.5"} }},
				{ID: "small", Model: "anthropic/claude-haiku-4.5", Provider: "anthropic", Credential: cred, SupportedEnvironments: []string{"local"}},
			},
			Environments: []catalog.Environment{
				{ID: "local", Driver: "in-process", Deadline: time.Minute},
				{ID: "remote", Driver: "process", Deadline: time.Minute, Metadata: map[string]string{"region": "eu"}},
			},
			Cases: []catalog.Case{
				{ID: "hello", Input: "Say hello.", Expect: []catalog.Matcher{catalog.MessageContains("hello")}},
				{ID: "bye", Input: "Say bye.", Expect: []catalog.Matcher{catalog.MessageContains("bye")}},
			},
		}},
	}
}

func TestCellsAreTheMatrixLessWhatProfilesDoNotSupport(t *testing.T) {
	c := small()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, cl := range c.Suites[0].Cells() {
		ids = append(ids, cl.ID)
	}
	want := "basics.big.local.hello basics.big.local.bye basics.big.remote.hello basics.big.remote.bye basics.small.local.hello basics.small.local.bye"
	if strings.Join(ids, " ") != want {
		t.Fatalf("cells %v", ids)
	}
}

func TestASuiteOfAnotherSizeIsRefused(t *testing.T) {
	c := small()
	c.Suites[0].Cases = append(c.Suites[0].Cases, catalog.Case{ID: "again", Input: "Again.", Expect: []catalog.Matcher{catalog.RunState("succeeded")}})
	err := c.Validate()
	if !errors.Is(err, catalog.ErrSizeMismatch) || !strings.Contains(err.Error(), "suite basics: size: declared 6 cells, has 9") {
		t.Fatalf("err %v", err)
	}
	if _, err := c.Select("", "", ""); !errors.Is(err, catalog.ErrSizeMismatch) {
		t.Fatalf("select ran an invalid catalog: %v", err)
	}
}

func TestDefinitionProblemsAreNamed(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *catalog.Suite)
		want   string
	}{
		{"an unsupported environment that does not exist", func(s *catalog.Suite) { s.Profiles[1].SupportedEnvironments = []string{"mars"} },
			`profiles[1].supportedEnvironments: "mars" is not one of the suite's environments`},
		{"a credential that is a value", func(s *catalog.Suite) { s.Profiles[0].Credential.Ref = catalog.SecretRef{Type: "plain", SecretID: "k"} },
			`profiles[0].credential: a credential is {"type": "secret_ref"`},
		{"a version other than latest", func(s *catalog.Suite) { s.Profiles[0].Credential.Ref.Version = "3" },
			`profiles[0].credential: secret_ref version "3": want "latest"`},
		{"an id with a dot", func(s *catalog.Suite) { s.Cases[0].ID = "a.b" }, `cases[0].id: "a.b"`},
		{"a case without a matcher", func(s *catalog.Suite) { s.Cases[1].Expect = nil }, `cases[1].expect: no matcher`},
		{"a matcher that cannot run", func(s *catalog.Suite) { s.Cases[1].Expect = []catalog.Matcher{catalog.MessageRegex("(")} },
			`cases[1].expect[0]: message_regex: error parsing regexp`},
		{"no grader", func(s *catalog.Suite) { s.Grader = "" }, "grader: empty"},
		{"a source that is not there", func(s *catalog.Suite) { s.Sources = append(s.Sources, "gone.go") }, "sources: gone.go"},
		{"no deadline", func(s *catalog.Suite) { s.Environments[0].Deadline = 0 }, "environments[0].deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := small()
			tt.change(&c.Suites[0])
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "suite basics: "+tt.want) {
				t.Fatalf("err %v; want %q", err, tt.want)
			}
		})
	}
}

// A raw secret anywhere in a definition is refused, naming the suite,
// the field and the rule, and never the value.
func TestARawSecretIsRefusedByFieldAndRule(t *testing.T) {
	anthropic := "sk-ant-api03-" + strings.Repeat("Q", 40)
	github := "ghp_" + strings.Repeat("s", 36)
	tests := []struct {
		name   string
		change func(s *catalog.Suite)
		field  string
	}{
		{"in a profile's options", func(s *catalog.Suite) {
			s.Profiles[0].Options = func() map[string]string { return map[string]string{"AI_GATEWAY_API_KEY": anthropic} }
		}, "profiles[0].options.AI_GATEWAY_API_KEY"},
		{"in an environment's metadata", func(s *catalog.Suite) { s.Environments[1].Metadata["token"] = github }, "environments[1].metadata.token"},
		{"in a case's input", func(s *catalog.Suite) { s.Cases[0].Input = "use this key: " + anthropic }, "cases[0].input"},
		{"in a matcher", func(s *catalog.Suite) { s.Cases[1].Expect = []catalog.Matcher{catalog.MessageContains(github)} }, "cases[1].expect[0].text"},
		{"as a secret id", func(s *catalog.Suite) { s.Profiles[1].Credential.Ref.SecretID = github }, "profiles[1].credential.ref.secretId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := small()
			tt.change(&c.Suites[0])
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "suite basics: "+tt.field+": looks like a secret (rule ") {
				t.Fatalf("err %v; want the field %s and its rule", err, tt.field)
			}
			for _, v := range []string{anthropic, github, anthropic[:20], github[:20]} {
				if strings.Contains(err.Error(), v) {
					t.Fatalf("the error holds the value: %v", err)
				}
			}
		})
	}
}

// The fingerprint changes with any change to what the suite measures,
// one field of each kind, and with a named source file; it does not
// change when nothing does.
func TestTheFingerprintChangesWithEachKindOfChange(t *testing.T) {
	base := small()
	fp := func(c *catalog.Catalog) string {
		t.Helper()
		s, err := c.Fingerprint(&c.Suites[0])
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := fp(base)
	if again := fp(small()); again != before || !strings.HasPrefix(before, "sha256:") {
		t.Fatalf("the same definition: %s, then %s", before, again)
	}
	changes := map[string]func(c *catalog.Catalog){
		"a profile's model":    func(c *catalog.Catalog) { c.Suites[0].Profiles[1].Model = "anthropic/claude-haiku-5" },
		"a profile's provider": func(c *catalog.Catalog) { c.Suites[0].Profiles[1].Provider = "vertex" },
		"a profile's options": func(c *catalog.Catalog) {
			c.Suites[0].Profiles[0].Options = func() map[string]string { return map[string]string{"AGENT_MODEL": "x"} }
		},
		"a profile's credential":   func(c *catalog.Catalog) { c.Suites[0].Profiles[0].Credential.Ref.SecretID = "OTHER_KEY" },
		"a profile's environments": func(c *catalog.Catalog) { c.Suites[0].Profiles[1].SupportedEnvironments = []string{"remote"} },
		"a profile's runtime":      func(c *catalog.Catalog) { c.Suites[0].Profiles[0].Runtime = map[string]string{"model": "x"} },
		"an environment's driver":  func(c *catalog.Catalog) { c.Suites[0].Environments[1].Driver = "container" },
		"an environment's deadline": func(c *catalog.Catalog) {
			c.Suites[0].Environments[0].Deadline = 2 * time.Minute
		},
		"an environment's metadata": func(c *catalog.Catalog) { c.Suites[0].Environments[1].Metadata["region"] = "us" },
		"a case's input":            func(c *catalog.Catalog) { c.Suites[0].Cases[0].Input = "Say hello!" },
		"a case's matcher":          func(c *catalog.Catalog) { c.Suites[0].Cases[0].Expect[0] = catalog.MessageExact("hello") },
		"a case's tags":             func(c *catalog.Catalog) { c.Suites[0].Cases[0].Tags = []string{"greeting"} },
		"the grader":                func(c *catalog.Catalog) { c.Suites[0].Grader = "matchers/v2" },
		"the declared size":         func(c *catalog.Catalog) { c.Suites[0].Size = 7 },
		"a named source file": func(c *catalog.Catalog) {
			c.Sources = fstest.MapFS{"grade.go": {Data: []byte("package grade // v2\n")}}
		},
	}
	for name, change := range changes {
		c := small()
		change(c)
		if after := fp(c); after == before {
			t.Errorf("%s: the fingerprint did not change (%s)", name, after)
		}
	}
	// How a suite is shown is not what it measures.
	c := small()
	c.Suites[0].Label, c.Suites[0].Description, c.Suites[0].Rank, c.Suites[0].Tier = "Other", "Other words.", 9, "nightly"
	if after := fp(c); after != before {
		t.Errorf("a new label, description, rank and tier changed the fingerprint")
	}
}
