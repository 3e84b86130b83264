package agentcatalog_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/catalog"
	"github.com/agentvcr/agentvcr/catalog/catalogcmd"
	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
)

// catalogCommand runs the catalog's command line, with no credential
// in the environment, and returns its exit code, stdout and stderr.
func catalogCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := catalogcmd.Command(newCatalog(t), catalog.EnvResolver(func(string) string { return "" }))
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetArgs(args)
	code := evalcmd.Execute(t.Context(), cmd, &stderr)
	return code, stdout.String(), stderr.String()
}

// The program lists the catalog, and runs the cells --suite and
// --profile select; without the gateway's key it says so before it sets
// anything up: exit 2, naming the variable, nothing written.
func TestTheCatalogsCommandLine(t *testing.T) {
	code, stdout, stderr := catalogCommand(t, "--list")
	if code != 0 || !strings.HasPrefix(stdout, "answers (smoke, rank 1): 20 cells, fingerprint sha256:") ||
		!strings.Contains(stdout, "\nthreads (nightly, rank 2): 10 cells") || !strings.Contains(stdout, "\n  threads.sonnet-one-tool.in-process.thread-report\n") {
		t.Fatalf("--list: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, _ = catalogCommand(t, "--list", "--json")
	var list []catalog.Listing
	if err := json.Unmarshal([]byte(stdout), &list); code != 0 || err != nil || len(list) != 2 || list[0].Size != len(list[0].Cells) {
		t.Fatalf("--list --json: exit %d, %v %+v", code, err, list)
	}
	code, stdout, stderr = catalogCommand(t, "--suite", "threads", "--profile", "sonnet-one-tool", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "dry run: 2 attempts would run") || !strings.Contains(stdout, "threads.sonnet-one-tool.in-process") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The shards of a run partition its attempts, cells × repetitions,
	// alike in each, each its share give or take one.
	plan := func(args ...string) []evals.Planned {
		t.Helper()
		code, stdout, stderr := catalogCommand(t, append([]string{"--dry-run", "--json", "--reps", "3"}, args...)...)
		var rep evals.Report
		if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil {
			t.Fatalf("%q: exit %d, %v\n%s", args, code, err, stderr)
		}
		return rep.Planned
	}
	whole := plan()
	var union []evals.Planned
	for i := 1; i <= 4; i++ {
		part := plan("--shard", fmt.Sprintf("%d/4", i))
		if n := len(part); n < len(whole)/4 || n > len(whole)/4+1 {
			t.Fatalf("shard %d/4 plans %d of %d attempts", i, n, len(whole))
		}
		union = append(union, part...)
	}
	key := func(p evals.Planned) string { return fmt.Sprint(p.Eval, p.Variant, p.Case, p.Rep) }
	slices.SortFunc(union, func(a, b evals.Planned) int { return strings.Compare(key(a), key(b)) })
	slices.SortFunc(whole, func(a, b evals.Planned) int { return strings.Compare(key(a), key(b)) })
	if len(whole) != 90 || !slices.Equal(union, whole) {
		t.Fatalf("the shards plan %d attempts, the whole run %d; not the same ones", len(union), len(whole))
	}
	code, _, stderr = catalogCommand(t, "--suite", "nope", "--dry-run")
	if code != 2 || !strings.Contains(stderr, `no cell of suite "nope"`) {
		t.Fatalf("no such suite: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "results")
	code, _, stderr = catalogCommand(t, "--suite", "threads", "--profile", "sonnet-one-tool", "--out", out)
	if code != 2 || !strings.Contains(stderr, "cell threads.sonnet-one-tool.in-process.thread-author needs credential AI_GATEWAY_API_KEY") {
		t.Fatalf("without the key: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a run without its key wrote results: %v", err)
	}
}

// The catalog program's --list prints what docs/catalog.md shows,
// fingerprints aside (they change with the sources).
func TestTheManualsCatalogListing(t *testing.T) {
	page, err := os.ReadFile("../../../docs/catalog.md")
	if err != nil {
		t.Fatal(err)
	}
	const before = "--profile haiku --reps 3\n```\n\n```\n"
	_, shown, ok := strings.Cut(string(page), before)
	if !ok {
		t.Fatal("docs/catalog.md has no catalog listing")
	}
	shown, _, _ = strings.Cut(shown, "```")
	code, stdout, stderr := catalogCommand(t, "--list")
	if code != 0 {
		t.Fatalf("--list: exit %d: %s", code, stderr)
	}
	fingerprint := regexp.MustCompile(`sha256:[0-9a-f]{16}`)
	mask := func(s string) string { return fingerprint.ReplaceAllString(s, "sha256:…") }
	if mask(stdout) != mask(shown) {
		t.Fatalf("--list:\n%s\ndocs/catalog.md:\n%s", stdout, shown)
	}
}
