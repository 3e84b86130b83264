package agentevals_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// recipes are the fenced blocks of docs/evals.md that TestTheCIRecipesRun
// runs, in order: the GitHub Actions workflow, the Kubernetes manifests.
func recipes(t *testing.T) []string {
	t.Helper()
	doc := string(file(t, "..", "..", "..", "docs", "evals.md"))
	var out []string
	for _, part := range strings.Split(doc, "<!-- run by TestTheCIRecipesRun -->\n")[1:] {
		body, ok := strings.CutPrefix(part, "```yaml\n")
		end := strings.Index(body, "\n```\n")
		if !ok || end < 0 {
			t.Fatalf("docs/evals.md: a recipe is not a yaml block right under its marker:\n%.200s", part)
		}
		out = append(out, body[:end+1])
	}
	if len(out) != 2 {
		t.Fatalf("docs/evals.md has %d recipes, want the workflow and the Job", len(out))
	}
	return out
}

// one is the only match of re in s, its groups.
func one(t *testing.T, re, s string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindAllStringSubmatch(s, -1)
	if len(m) != 1 {
		t.Fatalf("%d matches of %s in the recipe, want 1", len(m), re)
	}
	return m[0][1:]
}

// The GitHub Actions workflow and the Kubernetes Indexed Job of
// docs/evals.md run as they are written: each shard's command as a
// process of its own, in a working directory of its own (a runner, a
// pod), its results carried as the artifact steps or the shared volume
// carry them, then the merge's command.
func TestTheCIRecipesRun(t *testing.T) {
	rs := recipes(t)
	cs, cases := plainCases(t, 2)
	up := script(t, cs, 4)
	gw := newRelay(t, up)
	// merged checks a merge's results and what it printed.
	merged := func(t *testing.T, out string, p *evalProcess) {
		t.Helper()
		s := summaryOf(t, filepath.Join(out, "answers", "baseline"))
		if s.Shards != 3 || s.Attempts != 4 || s.Started != 4 || s.Scored != 4 {
			t.Fatalf("the merged summary: %+v", s)
		}
		if got := p.stdout.String(); !strings.Contains(got, "; ceiling $6.00 not reached\nmerged from 3 shards\n") {
			t.Fatalf("the merge printed:\n%s", got)
		}
	}

	t.Run("GitHub Actions", func(t *testing.T) {
		wf := rs[0]
		shardJob, mergeJob, ok := strings.Cut(wf, "\n  merge:\n")
		if !ok {
			t.Fatal("the workflow has no merge job")
		}
		var shards []string
		for _, s := range strings.Split(one(t, `shard: \[([0-9, ]+)\]`, shardJob)[0], ",") {
			shards = append(shards, strings.TrimSpace(s))
		}
		run := one(t, `- run: (.+)`, shardJob)[0]
		artifact, uploaded := one(t, `name: (eval-shard-.+)\n\s+path: \S+`, shardJob)[0], one(t, `name: eval-shard-.+\n\s+path: (\S+)`, shardJob)[0]
		pattern, downloaded := one(t, `pattern: (\S+)\n\s+path: \S+`, mergeJob)[0], one(t, `pattern: \S+\n\s+path: (\S+)`, mergeJob)[0]
		mergeRun := one(t, `- run: (.+)`, mergeJob)[0]

		artifacts := t.TempDir()
		var procs []*evalProcess
		var names []string
		for _, i := range shards {
			expand := strings.NewReplacer("${{ matrix.shard }}", i, "${{ strategy.job-total }}", fmt.Sprint(len(shards)), "${{ github.run_id }}", "4711")
			runner := t.TempDir() // a runner of its own
			procs = append(procs, gw.startIn(t, runner, nil, cases, program(t, expand.Replace(run))...))
			names = append(names, expand.Replace(artifact))
		}
		runners := make([]string, len(procs))
		for k, p := range procs {
			runners[k] = p.cmd.Dir
			if code := p.wait(t); code != 0 {
				t.Fatalf("shard %s: exit %d\n%s", shards[k], code, p.errText())
			}
			// actions/upload-artifact: the path's files, hidden ones left out.
			if err := copyVisible(filepath.Join(runners[k], uploaded), filepath.Join(artifacts, names[k])); err != nil {
				t.Fatal(err)
			}
		}
		merger := t.TempDir()
		// actions/download-artifact with a pattern: each artifact in a
		// directory of its name under the path.
		for _, name := range names {
			if ok, _ := path.Match(pattern, name); !ok {
				continue
			}
			if err := os.CopyFS(filepath.Join(merger, downloaded, name), os.DirFS(filepath.Join(artifacts, name))); err != nil {
				t.Fatal(err)
			}
		}
		p := gw.startIn(t, merger, nil, "", program(t, mergeRun)...)
		if code := p.wait(t); code != 0 {
			t.Fatalf("the merge: exit %d\n%s", code, p.errText())
		}
		merged(t, filepath.Join(merger, outOf(t, mergeRun)), p)
	})

	t.Run("Kubernetes Indexed Job", func(t *testing.T) {
		job, pod, ok := strings.Cut(rs[1], "\n---\n")
		if !ok {
			t.Fatal("the manifest has no merge pod")
		}
		completions := one(t, `\n  completions: (\d+)`, job)[0]
		if got := one(t, `name: JOB_COMPLETIONS\n\s+value: "(\d+)"`, job)[0]; got != completions {
			t.Fatalf("JOB_COMPLETIONS is %s, the Job's completions %s", got, completions)
		}
		volume := t.TempDir() // the shared volume
		uid := "0b6a8c1e-5d1f-4f8e-9a43-7c1d2e3f4a5b"
		var n int
		fmt.Sscan(completions, &n)
		var procs []*evalProcess
		for i := range n {
			env := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i), "JOB_COMPLETIONS": completions, "AGENTVCR_RUN_ID": uid}
			args := containerArgs(t, one(t, `command: (\[.+\])`, job)[0], env, volume)
			procs = append(procs, gw.startIn(t, t.TempDir(), []string{"JOB_COMPLETION_INDEX=" + env["JOB_COMPLETION_INDEX"], "JOB_COMPLETIONS=" + completions, "AGENTVCR_RUN_ID=" + uid}, cases, args...))
		}
		for i, p := range procs {
			if code := p.wait(t); code != 0 {
				t.Fatalf("pod %d: exit %d\n%s", i, code, p.errText())
			}
			if !strings.Contains(p.errText(), fmt.Sprintf("of which shard %d/%s makes", i+1, completions)) {
				t.Fatalf("pod %d is not shard %d/%s:\n%s", i, i+1, completions, p.errText())
			}
		}
		args := containerArgs(t, one(t, `command: (\[.+\])`, pod)[0], map[string]string{"RUN_ID": uid}, volume)
		p := gw.startIn(t, t.TempDir(), nil, "", args...)
		if code := p.wait(t); code != 0 {
			t.Fatalf("the merge: exit %d\n%s", code, p.errText())
		}
		merged(t, filepath.Join(volume, uid, "merged"), p)
	})
}

// program is a recipe's command line with the eval program ("go run
// ./cmd/evals") as this test's, its arguments.
func program(t *testing.T, line string) []string {
	t.Helper()
	rest, ok := strings.CutPrefix(line, "go run ./cmd/evals ")
	if !ok {
		t.Fatalf("a recipe's command does not run the eval program: %s", line)
	}
	return strings.Fields(rest)
}

// outOf is a command line's --out.
func outOf(t *testing.T, line string) string {
	t.Helper()
	return one(t, `--out (\S+)`, line)[0]
}

// containerArgs is a container's command, its $(VAR) expanded from env as
// Kubernetes does, /results on volume, without the program.
func containerArgs(t *testing.T, list string, env map[string]string, volume string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(list), &args); err != nil {
		t.Fatalf("command %s: %v", list, err)
	}
	if args[0] != "/evals" {
		t.Fatalf("the container runs %s, not the eval program", args[0])
	}
	re := regexp.MustCompile(`\$\((\w+)\)`)
	for i, a := range args {
		a = re.ReplaceAllStringFunc(a, func(m string) string { return env[m[2:len(m)-1]] })
		if rest, ok := strings.CutPrefix(a, "/results"); ok {
			a = volume + rest
		}
		args[i] = a
	}
	return args[1:]
}

// copyVisible copies the files under from to to, leaving out hidden
// files and directories, as actions/upload-artifact does by default.
func copyVisible(from, to string) error {
	return filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != from && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}
