package catalog_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
		{"a matcher that passes on anything", func(s *catalog.Suite) { s.Cases[1].Expect = []catalog.Matcher{catalog.MessageContains("  ")} },
			`cases[1].expect[0]: message_contains: no text but spaces`},
		{"an empty expression", func(s *catalog.Suite) { s.Cases[1].Expect = []catalog.Matcher{catalog.MessageRegex("")} },
			`cases[1].expect[0]: message_regex: an empty expression matches any message`},
		{"a need without steps", func(s *catalog.Suite) { s.Cases[0].Needs = []string{"user"} }, `cases[0].needs: the suite has no Steps`},
		{"a source that is not there", func(s *catalog.Suite) { s.Sources = append(s.Sources, "gone.go") }, "sources: source gone.go names no file"},
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
	// A pattern's tests do not count.
	c0 := small()
	c0.Sources = fstest.MapFS{"grade.go": {Data: []byte("package grade // v1\n")}, "app/a.go": {Data: []byte("package app\n")}}
	c0.Suites[0].Sources = []string{"grade.go", "app/*.go"}
	withPattern := fp(c0)
	c0.Sources.(fstest.MapFS)["app/a_test.go"] = &fstest.MapFile{Data: []byte("package app // a test\n")}
	if fp(c0) != withPattern {
		t.Errorf("a test file changed the fingerprint")
	}
	// How a suite is shown is not what it measures.
	c := small()
	c.Suites[0].Label, c.Suites[0].Description, c.Suites[0].Rank, c.Suites[0].Tier = "Other", "Other words.", 9, "nightly"
	if after := fp(c); after != before {
		t.Errorf("a new label, description, rank and tier changed the fingerprint")
	}
}

// No problem quotes a value that looks like a secret, whatever the field
// it is in and whatever else is wrong with it; keys, encoded values and
// the app's own configuration are read too.
func TestNoProblemQuotesASecret(t *testing.T) {
	anthropic := "sk-ant-api03-" + strings.Repeat("Q", 40)
	github := "ghp_" + strings.Repeat("s", 36)
	tests := []struct {
		name   string
		change func(s *catalog.Suite)
	}{
		{"as a secret_ref version", func(s *catalog.Suite) { s.Profiles[0].Credential.Ref.Version = anthropic }},
		{"as two cases' id", func(s *catalog.Suite) { s.Cases[0].ID, s.Cases[1].ID = github, github }},
		{"as a supported environment", func(s *catalog.Suite) { s.Profiles[1].SupportedEnvironments = []string{github} }},
		{"as a source", func(s *catalog.Suite) { s.Sources = []string{anthropic + ".go"} }},
		{"in a regex that does not compile", func(s *catalog.Suite) { s.Cases[0].Expect = []catalog.Matcher{catalog.MessageRegex("(" + github)} }},
		{"as a matcher kind", func(s *catalog.Suite) { s.Cases[0].Expect = []catalog.Matcher{{Kind: catalog.MatcherKind(github)}} }},
		{"as the suite's id", func(s *catalog.Suite) { s.ID = "x" + strings.ToLower(github) }},
		{"as a key of the options", func(s *catalog.Suite) {
			s.Profiles[0].Options = func() map[string]string { return map[string]string{anthropic: "1"} }
		}},
		{"base64-encoded", func(s *catalog.Suite) {
			s.Environments[1].Metadata["blob"] = base64.StdEncoding.EncodeToString([]byte("token " + github))
		}},
		{"percent-encoded", func(s *catalog.Suite) { s.Cases[1].Input = "call " + url.PathEscape("https://x.example/?k="+anthropic) }},
		{"in the app's environment", func(s *catalog.Suite) { s.App.Env = map[string]string{"ANTHROPIC_API_KEY": anthropic} }},
		{"as the app's admin secret", func(s *catalog.Suite) { s.App.AdminSecret = github }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := small()
			tt.change(&c.Suites[0])
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "looks like a secret (rule ") {
				t.Fatalf("err %v; want the secret refused", err)
			}
			for _, part := range []string{anthropic[:24], anthropic[20:], github[:24], github[16:]} {
				if strings.Contains(err.Error(), part) {
					t.Fatalf("the error quotes the value: %v", err)
				}
			}
		})
	}
}

func TestOptionsThatChangeAreRefused(t *testing.T) {
	c := small()
	n := 0
	c.Suites[0].Profiles[0].Options = func() map[string]string { n++; return map[string]string{"SEED": fmt.Sprint(n)} }
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "profiles[0].options: Options gives other options each call") {
		t.Fatalf("err %v", err)
	}
}

func TestAFingerprintOfABrokenSuiteIsAnError(t *testing.T) {
	c := small()
	c.Suites[0].Cases[0].Expect = []catalog.Matcher{{Kind: catalog.KindJSONPath, Path: "a", Want: []byte("{not json")}}
	if _, err := c.Fingerprint(&c.Suites[0]); err == nil {
		t.Fatal("no error")
	}
}
