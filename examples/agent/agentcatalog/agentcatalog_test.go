package agentcatalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agentcatalog"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
)

func TestMain(m *testing.M) { os.Exit(fixture.Main(m)) }

func newCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat := agentcatalog.New()
	cat.Sources = os.DirFS("../../..") // the repository's root
	return cat
}

// The example: two suites, three profiles (one in one environment
// only), two environments, every cell listed with its suite's
// fingerprint.
func TestTheCatalogIsValidAndListsItsCells(t *testing.T) {
	list, err := newCatalog(t).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "answers" || list[0].Size != 20 || len(list[0].Cells) != 20 ||
		list[1].ID != "threads" || list[1].Size != 10 || len(list[1].Cells) != 10 {
		t.Fatalf("listing %+v", list)
	}
	for _, c := range list[1].Cells {
		if strings.Contains(c, "sonnet-one-tool.process") {
			t.Fatalf("the in-process-only profile has a process cell: %s", c)
		}
	}
	if list[0].Fingerprint == list[1].Fingerprint || !strings.HasPrefix(list[0].Fingerprint, "sha256:") {
		t.Fatalf("fingerprints %s, %s", list[0].Fingerprint, list[1].Fingerprint)
	}
}

// The threads suite on the Sonnet profile, in-process and as the
// agent's own binary, with the model from a stand-in gateway: each cell
// passes its matchers, the profile's runtime among them, and keeps its
// evidence, sanitized.
func TestTheThreadsCellsRunAndPass(t *testing.T) {
	cat := newCatalog(t)
	cells, err := cat.Select("threads", "sonnet", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells", len(cells))
	}
	up := fakeai.NewServer(t)
	router := fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	titler := fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	for range 4 {
		up.Respond(router, fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}))
		up.Respond(titler, fakeai.Text("A thread"))
	}
	// The second answer quotes the gateway's key: no evidence may.
	for _, c := range []struct{ question, answer string }{{"user id of whoever started it", "U0TESTUSER"}, {"what it asks", "It asks who started it (test-gateway-key)."}} {
		a := fakeai.Agent{Name: c.answer, Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), c.question) }}
		for range 2 {
			up.Respond(a, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text(c.answer)))
		}
	}
	plan := cat.NewPlan(cells, catalog.EnvResolver(func(string) string { return "test-gateway-key" }), fixture.Upstream(up.Transport()))
	ctx := context.Background()
	plan.Setup(ctx)
	defer func() {
		if err := plan.Cleanup(ctx); err != nil {
			t.Error(err)
		}
	}()
	es, err := plan.Evals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	reported := &collect{}
	rep, err := evals.Run(ctx, evals.Config{Out: out, Concurrency: 2, Reporter: reported}, es...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Runs {
		if s.Scored != 2 || *s.Metrics[0].Mean != 1 || *s.Metrics[1].Mean != 1 {
			t.Errorf("%s: %+v %+v", s.Eval, s, s.Metrics)
		}
	}
	// The suite's fingerprint is in every row and summary, on disk and
	// as the Reporter got them.
	fp, err := cat.Fingerprint(cells[0].Suite)
	if err != nil {
		t.Fatal(err)
	}
	if len(reported.rows) != 4 || len(reported.reports) != 1 || reported.reports[0] != rep {
		t.Fatalf("the reporter got %d rows and %d reports", len(reported.rows), len(reported.reports))
	}
	for _, r := range reported.rows {
		if r.Fingerprint != fp {
			t.Errorf("row %s/%s: fingerprint %q, want %q", r.Eval, r.Case, r.Fingerprint, fp)
		}
	}
	for _, env := range []string{"in-process", "process"} {
		dir := filepath.Join(out, "threads.sonnet."+env, "baseline")
		var sum evals.Summary
		if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || sum.Fingerprint != fp {
			t.Errorf("%s: summary.json's fingerprint %q, want %q (%v)", env, sum.Fingerprint, fp, err)
		}
		for _, line := range readRows(t, filepath.Join(dir, "rows.jsonl")) {
			if !strings.Contains(line, `"fingerprint":"`+fp+`"`) {
				t.Errorf("%s: a row without the fingerprint: %s", env, line)
			}
		}
	}
	for _, env := range []string{"in-process", "process"} {
		b, err := os.ReadFile(filepath.Join(out, "threads.sonnet."+env, "baseline", "traces", "thread-report-r1", "evidence.json"))
		if err != nil || strings.Contains(string(b), "test-gateway-key") || !strings.Contains(string(b), "<<redacted>>") {
			t.Fatalf("%s: the evidence holds the run's credential, or is missing: %v\n%s", env, err, b)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "threads.sonnet.process", "baseline", "traces", "thread-author-r1", "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Cell    string
		Results []catalog.Result
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.Cell != "threads.sonnet.process.thread-author" || len(ev.Results) != 4 {
		t.Fatalf("evidence %s: %v", b, err)
	}
	// The Slack user id the agent answered is the workspace's: the
	// evidence holds a sanitizer's fake of it, not it.
	if strings.Contains(string(b), "U0TESTUSER") || !strings.Contains(string(b), `"matcher":"runtime"`) {
		t.Fatalf("evidence %s", b)
	}
}

// collect is an evals.Reporter that keeps what it is told.
type collect struct {
	rows    []evals.Row
	reports []*evals.Report
}

func (c *collect) Row(r evals.Row)          { c.rows = append(c.rows, r) }
func (c *collect) Report(rep *evals.Report) { c.reports = append(c.reports, rep) }

// readRows reads a rows.jsonl.
func readRows(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// A cell whose credential is missing fails, each one, naming the
// reference; it is never skipped.
func TestACellWithoutItsCredentialFails(t *testing.T) {
	cat := newCatalog(t)
	cells, err := cat.Select("answers", "haiku", "in-process")
	if err != nil {
		t.Fatal(err)
	}
	es, err := cat.NewPlan(cells, catalog.EnvResolver(func(string) string { return "" })).Evals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := evals.Run(context.Background(), evals.Config{Out: out}, es...)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Runs[0]
	if s.Started != 4 || s.Attempts != 4 || s.Excluded[evals.SetupError] != 4 || s.Scored != 0 {
		t.Fatalf("summary %+v", s)
	}
	dir := filepath.Join(out, "answers.haiku.in-process", "baseline")
	b, _ := os.ReadFile(filepath.Join(dir, "failures.jsonl"))
	if strings.Count(string(b), "needs credential AI_GATEWAY_API_KEY (secret_ref AI_GATEWAY_API_KEY, version latest), which is not available") != 4 {
		t.Fatalf("failures:\n%s", b)
	}
	// Each failure points at its trace, which holds the attempt's log.
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var f struct{ Trace string }
		if err := json.Unmarshal([]byte(line), &f); err != nil || f.Trace == "" {
			t.Fatalf("failure %s: no trace (%v)", line, err)
		}
		if _, err := os.Stat(filepath.Join(dir, f.Trace, "attempt.log")); err != nil {
			t.Fatalf("failure %s: %v", line, err)
		}
	}
}

func TestAskingForWhatIsNotThereIsAnError(t *testing.T) {
	cat := newCatalog(t)
	if _, err := cat.Select("threads", "sonnet-one-tool", "process"); err == nil || !strings.Contains(err.Error(), `no cell of suite "threads", profile "sonnet-one-tool", environment "process"`) {
		t.Fatalf("err %v", err)
	}
}

// A case's setup step makes its data through the app's public routes
// (here a web conversation, as its user) before the case runs; what it
// made is in the cell's evidence.
func TestAStepMakesItsDataThroughTheAppsRoutes(t *testing.T) {
	cat := newCatalog(t)
	threads := &cat.Suites[1]
	threads.Steps = &catalog.Registry{}
	if err := threads.Steps.Add(catalog.Step{ID: "earlier-conversation",
		Setup: func(ctx context.Context, routes *catalog.Routes, _ map[string]catalog.State) (catalog.State, error) {
			var out struct{ ConversationID string }
			err := routes.Do(ctx, "POST", "/api/conversations", map[string]string{"idempotencyKey": "step-1", "message": "Remember: deploy 42 went out."}, &out)
			if out.ConversationID == "" && err == nil {
				err = errors.New("no conversation id")
			}
			return catalog.State{"conversationId": out.ConversationID}, err
		}}); err != nil {
		t.Fatal(err)
	}
	threads.Cases[0].Needs = []string{"earlier-conversation"}
	cells, err := cat.Select("threads", "sonnet", "in-process")
	if err != nil {
		t.Fatal(err)
	}
	up := fakeai.NewServer(t)
	router := fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	titler := fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	seed := fakeai.Agent{Name: "seed", Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), "deploy 42") }}
	for range 3 {
		up.Respond(router, fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}))
		up.Respond(titler, fakeai.Text("A thread"))
	}
	up.Respond(seed, fakeai.Text("Noted."))
	for _, c := range []struct{ question, answer string }{{"user id of whoever started it", "U0TESTUSER"}, {"what it asks", "It asks who started it."}} {
		a := fakeai.Agent{Name: c.answer, Purpose: "agent", Match: func(p *fakeai.Prompt) bool { return strings.Contains(p.Text(), c.question) }}
		up.Respond(a, fakeai.ToolCalls(fakeai.Call("slackThreadRead", map[string]any{})).Then(fakeai.Text(c.answer)))
	}
	ctx := context.Background()
	es, err := cat.NewPlan(cells, catalog.EnvResolver(func(string) string { return "test-gateway-key" }), fixture.Upstream(up.Transport())).Evals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := evals.Run(ctx, evals.Config{Out: out}, es...)
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Runs[0]; s.Scored != 2 || *s.Metrics[0].Mean != 1 {
		t.Fatalf("summary %+v %+v", s, s.Metrics)
	}
	b, err := os.ReadFile(filepath.Join(out, "threads.sonnet.in-process", "baseline", "traces", "thread-author-r1", "evidence.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Steps map[string]catalog.State
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.Steps["earlier-conversation"]["conversationId"] == "" {
		t.Fatalf("evidence %s: %v", b, err)
	}
}
