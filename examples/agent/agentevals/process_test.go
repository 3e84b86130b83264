package agentevals_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/evals/evalcmd"
	"github.com/agentvcr/agentvcr/fakeai"
)

// The environment of the eval program a process test runs: this test
// binary, which TestMain makes the example's eval program, its model a
// stand-in gateway the test serves.
const (
	childGateway = "AGENTEVALS_TEST_GATEWAY"    // the gateway's host:port
	childCA      = "AGENTEVALS_TEST_GATEWAY_CA" // a file with the certificate of its authority
	childCases   = "AGENTEVALS_TEST_CASES"      // the cases file; "": the example's own
)

// evalProgram is the example's eval program, as cmd/evals is, its model
// the test's stand-in gateway. It exits.
func evalProgram() {
	pem, err := os.ReadFile(os.Getenv(childCA))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	addr := os.Getenv(childGateway)
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	rt := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:   &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
	evalcmd.Main(answersVia(rt, os.Getenv(childCases)))
}

// relay is the stand-in gateway as the eval processes reach it: a TCP
// relay to up that can hold connections until the test lets them go, so
// that a test knows an attempt is running, and that it goes on running.
type relay struct {
	addr, ca string

	mu      sync.Mutex
	arrived chan struct{} // armed by hold: closed as a connection comes
	release chan struct{} // armed by hold: closed to let connections through
}

func newRelay(t *testing.T, up *fakeai.Server) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &relay{addr: ln.Addr().String(), ca: filepath.Join(t.TempDir(), "gateway-ca.pem")}
	if err := os.WriteFile(r.ca, up.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	target := strings.TrimPrefix(up.URL, "https://")
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			arrived, release := r.arrived, r.release
			r.arrived = nil
			r.mu.Unlock()
			go func() {
				defer c.Close()
				if arrived != nil {
					close(arrived)
				}
				if release != nil {
					select {
					case <-release:
					case <-done:
						return
					}
				}
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go io.Copy(u, c)
				io.Copy(c, u)
			}()
		}
	}()
	return r
}

// hold makes the relay hold every connection from now on: arrived is
// closed as the first comes, and release lets them all through.
func (r *relay) hold() (arrived <-chan struct{}, release func()) {
	a, rel := make(chan struct{}), make(chan struct{})
	r.mu.Lock()
	r.arrived, r.release = a, rel
	r.mu.Unlock()
	var once sync.Once
	return a, func() {
		once.Do(func() {
			r.mu.Lock()
			r.release = nil
			r.mu.Unlock()
			close(rel)
		})
	}
}

// evalProcess is an eval program run as its own process.
type evalProcess struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string // stderr, a line at a time
	mu     sync.Mutex
	stderr strings.Builder
	exited chan struct{}
	err    error
}

// start starts the eval program with args, its model from r.
func (r *relay) start(t *testing.T, cases string, args ...string) *evalProcess {
	t.Helper()
	return r.startIn(t, "", nil, cases, args...)
}

// startIn is start in the working directory dir, with env added to the
// environment.
func (r *relay) startIn(t *testing.T, dir string, env []string, cases string, args ...string) *evalProcess {
	t.Helper()
	p := &evalProcess{cmd: exec.Command(os.Args[0], args...), lines: make(chan string, 1024), exited: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), childGateway+"="+r.addr, childCA+"="+r.ca, childCases+"="+cases)
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		<-scanned
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait waits for the process to exit, and returns its exit code (-1
// when a signal ended it).
func (p *evalProcess) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the eval program did not exit in 3 minutes:\n%s", p.errText())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *evalProcess) errText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// await waits for a line on stderr that holds what.
func (p *evalProcess) await(t *testing.T, what string) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, what) {
				return
			}
		case <-p.exited:
			t.Fatalf("the eval program exited without saying %q:\n%s", what, p.errText())
		case <-deadline:
			t.Fatalf("the eval program did not say %q in a minute:\n%s", what, p.errText())
		}
	}
}

// run runs the eval program with args to its end and returns its exit
// code.
func (r *relay) run(t *testing.T, cases string, args ...string) (int, *evalProcess) {
	t.Helper()
	p := r.start(t, cases, args...)
	return p.wait(t), p
}

// plainCases are cases of the example that need no tool, written as a
// cases file.
func plainCases(t *testing.T, n int) ([]evals.Case, string) {
	t.Helper()
	var out []evals.Case
	var lines []string
	for _, c := range cases(t) {
		if len(out) == n {
			break
		}
		if c.HasTag("tool") {
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out, lines = append(out, c), append(lines, string(b))
	}
	return out, casesFile(t, lines...)
}

// Three shards, each its own process, merged, are the run one process
// makes: the same rows for each case and repetition (their timings
// aside), the same summaries (means, intervals, counts, costs) and the
// same comparison with the baseline. A merge refuses a missing shard, a
// shard there twice, and shards of two definitions or runs, naming
// them.
func TestThreeShardsMergedAreOneRun(t *testing.T) {
	cs, path := plainCases(t, 4)
	up := script(t, cs, 14)
	t.Cleanup(func() { up.DropUnused() })
	gw := newRelay(t, up)
	args := []string{"--reps", "2", "--variant", "haiku", "--concurrency", "2", "--max-cost-usd", "1"}

	whole := filepath.Join(t.TempDir(), "whole")
	if code, p := gw.run(t, path, append(args, "--out", whole)...); code != 0 {
		t.Fatalf("the unsharded run: exit %d\n%s", code, p.errText())
	}
	shards := t.TempDir()
	var procs []*evalProcess
	for i := 1; i <= 3; i++ {
		procs = append(procs, gw.start(t, path, append(args, "--shard", fmt.Sprintf("%d/3", i), "--run-id", "ci-4711", "--out", filepath.Join(shards, fmt.Sprintf("shard-%d", i)))...))
	}
	for i, p := range procs {
		if code := p.wait(t); code != 0 {
			t.Fatalf("shard %d/3: exit %d\n%s", i+1, code, p.errText())
		}
		if !strings.Contains(p.errText(), fmt.Sprintf("= 16 attempts, of which shard %d/3 makes", i+1)) {
			t.Fatalf("shard %d/3 said:\n%s", i+1, p.errText())
		}
	}
	merged := filepath.Join(t.TempDir(), "merged")
	code, p := gw.run(t, "", "--merge", shards, "--out", merged, "--json")
	if code != 0 {
		t.Fatalf("merge: exit %d\n%s", code, p.errText())
	}
	var rep evals.Report
	if err := json.Unmarshal(p.stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the merge's report: %v\n%s", err, p.stdout.String())
	}
	if rep.Shards != 3 || rep.CostUSD == nil || *rep.CostUSD <= 0 || len(rep.Comparisons) != 1 {
		t.Fatalf("the merged report: %+v", rep)
	}
	// The run's ceiling, over the three shards' shares of it.
	if c := rep.Ceiling; c == nil || c.MaxUSD != 1 || !c.Held || c.Reached || c.ShareOfUSD != 0 {
		t.Fatalf("the merged ceiling: %+v", c)
	}
	share := 0.0
	for i := 1; i <= 3; i++ {
		sh := summaryOf(t, filepath.Join(shards, fmt.Sprintf("shard-%d", i), "answers", "baseline")).Shard
		if sh == nil || sh.Index != i || sh.Of != 3 || sh.Run != "ci-4711" || sh.Ceiling == nil || sh.Ceiling.ShareOfUSD != 1 || sh.Ceiling.MaxUSD != sh.CeilingShareUSD {
			t.Fatalf("shard %d/3 says %+v", i, sh)
		}
		share += sh.CeilingShareUSD
	}
	if !near(share, 1) {
		t.Fatalf("the shards' shares of the ceiling sum to %v, want 1", share)
	}
	for _, variant := range []string{"baseline", "haiku"} {
		a, b := filepath.Join(whole, "answers", variant), filepath.Join(merged, "answers", variant)
		wantRows, gotRows := rowsOf(t, a), rowsOf(t, b)
		if len(wantRows) != 8 || !reflect.DeepEqual(gotRows, wantRows) {
			t.Errorf("%s: the merged rows differ from the unsharded run's:\n got %+v\nwant %+v", variant, gotRows, wantRows)
		}
		want, got := summaryOf(t, a), summaryOf(t, b)
		if got.Shards != 3 || got.Started != 8 || got.Metrics[0].CI95 == nil {
			t.Errorf("%s: merged summary %+v", variant, got)
		}
		got.Shards, got.Dir, want.Dir = 0, "", ""
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the merged summary differs:\n got %+v\nwant %+v", variant, got, want)
		}
		if !bytes.Equal(file(t, a, "failures.jsonl"), file(t, b, "failures.jsonl")) {
			t.Errorf("%s: failures.jsonl differs", variant)
		}
		if !slices.Equal(tree(t, filepath.Join(a, "traces")), tree(t, filepath.Join(b, "traces"))) {
			t.Errorf("%s: the traces differ: %q and %q", variant, tree(t, filepath.Join(a, "traces")), tree(t, filepath.Join(b, "traces")))
		}
	}
	if !bytes.Equal(file(t, whole, "answers/haiku/comparison.json"), file(t, merged, "answers/haiku/comparison.json")) {
		t.Errorf("the comparisons differ:\n%s\n%s", file(t, whole, "answers/haiku/comparison.json"), file(t, merged, "answers/haiku/comparison.json"))
	}

	// What a merge refuses, each time with exit 2 and nothing written.
	twice := filepath.Join(t.TempDir(), "shard-2-again")
	if err := os.CopyFS(twice, os.DirFS(filepath.Join(shards, "shard-2"))); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other-definition")
	if code, p := gw.run(t, path, "--reps", "1", "--variant", "haiku", "--shard", "3/3", "--run-id", "ci-4711", "--out", other); code != 0 {
		t.Fatalf("a shard of another definition: exit %d\n%s", code, p.errText())
	}
	otherRun := filepath.Join(t.TempDir(), "other-run")
	if err := os.CopyFS(otherRun, os.DirFS(filepath.Join(shards, "shard-3"))); err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"baseline", "haiku"} {
		f := filepath.Join(otherRun, "answers", variant, "summary.json")
		b := bytes.ReplaceAll(file(t, f), []byte(`"run": "ci-4711"`), []byte(`"run": "ci-4712"`))
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := func(i int) string { return filepath.Join(shards, fmt.Sprintf("shard-%d", i)) }
	// edited copies every shard's results and edits files of shard 1's
	// baseline: file, edit, file, edit...
	type edit struct {
		file string
		f    func([]byte) []byte
	}
	edited := func(name string, edits ...edit) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.CopyFS(dir, os.DirFS(shards)); err != nil {
			t.Fatal(err)
		}
		for _, e := range edits {
			paths := []string{filepath.Join(dir, "shard-1", "answers", "baseline", e.file)}
			if every, ok := strings.CutPrefix(e.file, "every "); ok {
				// The file of every shard's every result.
				paths, _ = filepath.Glob(filepath.Join(dir, "shard-*", "answers", "*", every))
			}
			for _, path := range paths {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, e.f(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return dir
	}
	replace := func(file, old, new string) edit {
		return edit{file, func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }}
	}
	climbing := edited("climbing", replace("summary.json", `"eval": "answers"`, `"eval": ".."`), replace("summary.json", `"variant": "baseline"`, `"variant": "victim"`))
	victim := filepath.Join(filepath.Dir(climbing), "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	lastLine := edit{"rows.jsonl", func(b []byte) []byte {
		lines := bytes.SplitAfter(bytes.TrimSpace(b), []byte("\n"))
		return bytes.Join(lines[:len(lines)-1], nil)
	}}
	short := edited("short", lastLine)
	unexplained := edited("unexplained", lastLine, replace("summary.json", `"started": 3`, `"started": 2`))
	forged := edited("forged", replace("rows.jsonl", `"attempt":1,`, `"attempt":2,`))
	relabelled := edited("relabelled", replace("rows.jsonl", `"case":"`, `"case":"zz-`))
	reps := edited("reps", replace("summary.json", `"reps": 2`, `"reps": 3`))
	huge := edited("huge", replace("summary.json", `"reps": 2`, `"reps": 2000000000`))
	relabelledAll := edited("relabelled-all", edit{"every rows.jsonl", func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"case":"`+cs[0].ID+`"`), []byte(`"case":"`+cs[1].ID+`"`))
	}})
	// A shard's results where the merge into the directory holding them
	// would write: DIR/answers/baseline.
	nested := filepath.Join(t.TempDir(), "nested")
	for i, at := range []string{filepath.Join("answers", "baseline"), "s2", "s3"} {
		if err := os.CopyFS(filepath.Join(nested, at), os.DirFS(filepath.Join(shards, fmt.Sprintf("shard-%d", i+1)))); err != nil {
			t.Fatal(err)
		}
	}
	malformed := edited("malformed", edit{"summary.json", func(b []byte) []byte { return b[:len(b)/2] }})
	linked := edited("linked")
	traces := filepath.Join(linked, "shard-1", "answers", "baseline", "traces")
	if err := os.RemoveAll(traces); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, traces); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"a missing shard", []string{s(1), s(3)}, "shard 2/3 is missing: no results of it under"},
		{"a shard there twice", []string{shards, twice}, "shard 2/3 is there twice: in " + s(2) + " and " + twice},
		{"shards of two definitions", []string{s(1), s(2), other}, "shards of two definitions: "},
		{"shards of two runs", []string{s(1), s(2), otherRun}, "is of run ci-4711, " + filepath.Join(otherRun, "answers", "baseline") + " of run ci-4712"},
		{"names that climb out of --out", []string{climbing}, `not a shard's results: eval "..", variant "victim"`},
		{"fewer rows than the summary says", []string{short}, "rows.jsonl (shard 1/3) holds 2 rows; its summary says 3 attempts started"},
		{"a row of another shard's", []string{forged}, "rows.jsonl (shard 1/3):1: attempt 2 (answers/baseline "},
		{"a malformed summary", []string{malformed}, "a malformed shard result: "},
		{"unstarted attempts without a reason", []string{unexplained}, "(shard 1/3) started 2 of its 3 attempts, and says nothing of why it stopped"},
		{"a relabelled case", []string{relabelled}, "the other attempts of its place in the plan are of"},
		{"repetitions that disagree", []string{reps}, "the shards' summaries disagree: "},
		{"traces that are a link", []string{linked}, "is not a directory (a link, a file): not a shard's traces"},
		{"an --out inside a shard's results", []string{shards}, "is inside the results of shard 1/3"},
		{"repetitions past any run's", []string{huge}, "2000000000 repetitions: a run makes 1 to 100000"},
		{"a case relabelled everywhere", []string{relabelledAll}, "which another place in the plan holds"},
		{"a shard where the merge would write", []string{nested}, "which holds the results of shard 1/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			switch {
			case strings.HasPrefix(tc.name, "an --out inside"):
				out = filepath.Join(s(1), "merged")
			case strings.HasPrefix(tc.name, "a shard where the merge would write"):
				out = nested
			}
			var args []string
			for _, d := range tc.dirs {
				args = append(args, "--merge", d)
			}
			code, p := gw.run(t, "", append(args, "--out", out)...)
			if code != 2 || !strings.Contains(p.errText(), tc.want) {
				t.Fatalf("exit %d, want 2 and %q:\n%s", code, tc.want, p.errText())
			}
			if _, err := os.Stat(out); out != nested && !os.IsNotExist(err) {
				t.Fatalf("a refused merge wrote %s: %v", out, err)
			}
		})
	}
	if entries, err := os.ReadDir(victim); err != nil || len(entries) != 0 {
		t.Fatalf("a merge wrote outside its --out: %v %v", entries, err)
	}
	if !slices.Equal(tree(t, filepath.Join(nested, "answers", "baseline")), tree(t, s(1))) {
		t.Fatalf("a refused merge changed the shard results it would have replaced")
	}
	// A directory named twice is read once; a link to one is followed.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(shards, link); err != nil {
		t.Fatal(err)
	}
	if code, p := gw.run(t, "", "--merge", link, "--merge", s(2), "--merge", shards, "--out", filepath.Join(t.TempDir(), "again")); code != 0 {
		t.Fatalf("the shards named twice: exit %d\n%s", code, p.errText())
	}
}

// rowsOf reads a results directory's rows, their timings zeroed.
func rowsOf(t *testing.T, dir string) []evals.Row {
	t.Helper()
	var rows []evals.Row
	for _, l := range readLines(t, filepath.Join(dir, "rows.jsonl")) {
		var r evals.Row
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		r.DurationMs = 0
		rows = append(rows, r)
	}
	return rows
}

func summaryOf(t *testing.T, dir string) evals.Summary {
	t.Helper()
	var s evals.Summary
	if err := json.Unmarshal(file(t, dir, "summary.json"), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func file(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tree lists the files under dir, relative to it.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snapshot is every file under dir and its bytes.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rel := range tree(t, dir) {
		out[rel] = string(file(t, dir, rel))
	}
	return out
}

// Ctrl-C as the last attempt runs: the program exits 130, writes what
// ran to <variant>.interrupted and leaves the last whole run's results
// byte for byte. A second Ctrl-C ends the program at once, leaving its
// staging directory, which the next run removes.
func TestCtrlCDuringTheLastAttempt(t *testing.T) {
	cs, path := plainCases(t, 1)
	up := script(t, cs, 4)
	t.Cleanup(func() { up.DropUnused() })
	gw := newRelay(t, up)
	out := t.TempDir()
	if code, p := gw.run(t, path, "--out", out); code != 0 {
		t.Fatalf("the whole run: exit %d\n%s", code, p.errText())
	}
	last := filepath.Join(out, "answers", "baseline")
	before := snapshot(t, last)

	arrived, release := gw.hold()
	p := gw.start(t, path, "--out", out)
	<-arrived // the only attempt, the last, is making its first model request
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.await(t, "evals: interrupted: no new attempt starts")
	release()
	if code := p.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", code, p.errText())
	}
	if after := snapshot(t, last); !reflect.DeepEqual(after, before) {
		t.Fatalf("the last whole run's results changed")
	}
	if rows := readLines(t, filepath.Join(out, "answers", "baseline.interrupted", "rows.jsonl")); len(rows) != 1 || !strings.Contains(rows[0], `"status":"interrupted"`) {
		t.Fatalf("the interrupted run's rows: %q", rows)
	}

	arrived, release = gw.hold()
	p = gw.start(t, path, "--out", out)
	<-arrived
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.await(t, "evals: interrupted: no new attempt starts")
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	release()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("a second Ctrl-C: %v, want the program ended by SIGINT:\n%s", p.cmd.ProcessState, p.errText())
	}
	if left := leftovers(t, filepath.Join(out, "answers")); len(left) == 0 {
		t.Fatal("a second Ctrl-C left no staging directory: the test does not test the sweep")
	}
	if after := snapshot(t, last); !reflect.DeepEqual(after, before) {
		t.Fatalf("the last whole run's results changed")
	}
	if code, p := gw.run(t, path, "--out", out); code != 0 {
		t.Fatalf("the next run: exit %d\n%s", code, p.errText())
	}
	if left := leftovers(t, filepath.Join(out, "answers")); len(left) > 0 {
		t.Fatalf("the next run left what the killed run left: %q", left)
	}
}

// leftovers are the staging directories and lock files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}
