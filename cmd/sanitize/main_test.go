package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/sanitize"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

const key = "cli-test-key-0123456789abcdef012"

type result struct {
	code           int
	stdout, stderr string
}

func sanitizeCmd(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return result{code, out.String(), errb.String()}
}

var withKey = map[string]string{"AGENTVCR_SANITIZE_KEY": key}

// sample writes a raw export of the Slack sample conversation.
func sample(t *testing.T, dir, name string, rows int) string {
	t.Helper()
	conv, _ := juniortest.SlackThread()
	rec := &history.Recording{Header: history.Header{Version: 1, Surface: conv.Surface,
		Exporter: &history.Exporter{Tool: "agentvcr", ConversationID: conv.ID}, Identities: conv.Identities}}
	for _, e := range conv.Events[:rows] {
		if !juniortest.Uncopied(e.Type) {
			rec.Events = append(rec.Events, e)
		}
	}
	var buf bytes.Buffer
	if err := history.Write(&buf, rec); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSanitizeStdinToStdoutThenCheck(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(sample(t, dir, "raw.json", 20))
	if err != nil {
		t.Fatal(err)
	}
	r := sanitizeCmd(t, withKey, string(raw))
	if r.code != 0 || strings.Contains(r.stdout, "Ada Quill") || !strings.Contains(r.stdout, `"sanitizer"`) {
		t.Fatalf("sanitize: exit %d, stderr %q", r.code, r.stderr)
	}
	if again := sanitizeCmd(t, withKey, string(raw)); again.stdout != r.stdout {
		t.Fatal("the same key gave different output")
	}
	clean := filepath.Join(dir, "clean.json")
	if err := os.WriteFile(clean, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := sanitizeCmd(t, nil, "", "check", clean); c.code != 0 {
		t.Fatalf("check of sanitized output: %+v", c)
	}
	if c := sanitizeCmd(t, nil, "", "check", dir); c.code != 1 || !strings.Contains(c.stdout, "raw.json: exporter.sanitizer: no sanitizer stamp") {
		t.Fatalf("check of the directory: %+v", c)
	}
	noKey := sanitizeCmd(t, nil, string(raw))
	if noKey.code != 0 || !strings.Contains(noKey.stderr, "random key") || !strings.Contains(noKey.stdout, `"randomKey": true`) {
		t.Fatalf("without a key: %+v", noKey.stderr)
	}
}

func TestCheckJuniorRecording(t *testing.T) {
	path := filepath.Join("testdata", "launch-planning.json")
	r := sanitizeCmd(t, nil, "", "check", "--json", path)
	var f leakcheck.Finding
	if r.code != 1 || json.Unmarshal([]byte(r.stdout), &f) != nil || f.Path != "exporter.sanitizer" {
		t.Fatalf("check of the unsanitized interop file: %+v", r)
	}
	out := filepath.Join(t.TempDir(), "lp.json")
	if r := sanitizeCmd(t, withKey, "", "-o", out, path); r.code != 0 {
		t.Fatalf("sanitize: %+v", r)
	}
	if r := sanitizeCmd(t, nil, "", "check", out); r.code != 0 || r.stdout != "" || r.stderr != "checked 1 file: no problems\n" {
		t.Fatalf("check of its sanitized output: %+v; want exit 0 and a summary on stderr", r)
	}
}

func TestDirectoryIsConsistentAndAllOrNothing(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	sample(t, in, "a.json", 20)
	sample(t, in, "b.json", 30)
	report := filepath.Join(t.TempDir(), "report.json")
	if r := sanitizeCmd(t, withKey, "", "--report", report, "-o", out, in); r.code != 0 {
		t.Fatalf("sanitize dir: %+v", r)
	}
	a, _ := os.ReadFile(filepath.Join(out, "a.json"))
	b, _ := os.ReadFile(filepath.Join(out, "b.json"))
	if len(a) == 0 || !bytes.HasPrefix(b[:len(a)-len("\n  ]\n}\n")], a[:len(a)-len("\n  ]\n}\n")]) {
		t.Fatal("the same rows sanitized differently in two files of one run")
	}
	rep, _ := os.ReadFile(report)
	if !strings.Contains(string(rep), `"files": 2`) || !strings.Contains(string(rep), `"message.payload.meta.author.fullName"`) || strings.Contains(string(rep), "Ada") || strings.Contains(string(rep), "U0ADA00001") {
		t.Fatalf("report:\n%s", rep)
	}
	if r := sanitizeCmd(t, nil, "", "check", out, report); r.code != 0 {
		t.Fatalf("check of the output and its report: %+v", r)
	}

	// One stamped file in the directory: nothing is written at all.
	out2 := filepath.Join(t.TempDir(), "out2")
	if err := os.WriteFile(filepath.Join(in, "c.json"), a, 0o644); err != nil {
		t.Fatal(err)
	}
	r := sanitizeCmd(t, withKey, "", "-o", out2, in)
	if r.code != 1 || !strings.Contains(r.stderr, "c.json") || !strings.Contains(r.stderr, "already sanitized") {
		t.Fatalf("stamped file in the directory: %+v", r)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Fatal("a refused directory run wrote its output directory")
	}
	if r := sanitizeCmd(t, withKey, "", "--force", "-o", out2, in); r.code != 0 {
		t.Fatalf("with --force: %+v", r)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	raw := sample(t, dir, "raw.json", 20)
	bad := filepath.Join(dir, "v2.json")
	os.WriteFile(bad, []byte(`{"version":2,"surface":"web","events":[]}`), 0o600)
	// A learned handle inside base64 after a line of another length,
	// which the rewrite cannot write again and the leak check decodes:
	// refused.
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`{"version":1,"events":{"tool_result":[{"path":"payload.owner","kind":"handle"}]}}`), 0o600)
	leaky := filepath.Join(dir, "leaky.json")
	blob := base64.StdEncoding.EncodeToString([]byte("note: ")) + `\n` + base64.StdEncoding.EncodeToString([]byte("nadia.quill"))
	os.WriteFile(leaky, []byte(`{"version":1,"surface":"web","events":[{"seq":3,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"owner":"nadia.quill","blob":"`+blob+`"}}]}`), 0o600)
	leakOut := filepath.Join(dir, "leak.json")
	shortKey := filepath.Join(dir, "short.key")
	os.WriteFile(shortKey, []byte("abc\n"), 0o600)
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"bad input", []string{bad}, 2, "v2.json (byte 12): version"},
		{"short key", []string{"--key-file", shortKey, raw}, 2, "at least 16"},
		{"missing file", []string{filepath.Join(dir, "nope.json")}, 2, "nope.json: no such file"},
		{"check of an empty directory", []string{"check", t.TempDir()}, 2, "nothing was checked"},
		{"check of a missing path", []string{"check", filepath.Join(dir, "nope")}, 2, "no such file"},
		{"bad rules", []string{"--rules", bad, raw}, 2, "rules"},
		{"directory without -o", []string{dir}, 2, "-o DIR"},
		{"leak", []string{"--rules", rules, "-o", leakOut, leaky}, 1, "leaky.json: refusing to write"},
		{"check needs a path", []string{"check"}, 2, "sanitize check takes [--json] PATH...: requires at least 1 arg(s), only received 0 (sanitize check --help says more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sanitizeCmd(t, withKey, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.says)
			}
		})
	}
	if _, err := os.Stat(leakOut); !os.IsNotExist(err) {
		t.Fatal("a refused run wrote its output")
	}
}

func TestPeopleFileAndSkipRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o700)
	// One file names a person it never references; the people file knows
	// her. Another holds a handle in base64 the rewrite cannot write
	// again (lines of two lengths), which is refused.
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"ask Dana Okonkwo"}}]}`), 0o600)
	blob := base64.StdEncoding.EncodeToString([]byte("note: ")) + `\n` + base64.StdEncoding.EncodeToString([]byte("dana.okonkwo"))
	os.WriteFile(filepath.Join(in, "b.json"), []byte(`{"version":1,"surface":"web","events":[{"seq":4,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"blob":"`+blob+`"}}]}`), 0o600)
	name, handle := "Dana Okonkwo", "dana.okonkwo"
	people, _ := json.Marshal(sanitize.People{Kind: sanitize.PeopleKind, Version: 1, Identities: []history.Identity{
		{ID: "i1", Kind: "user", Provider: "slack", ProviderSubjectID: "U0DANA0001", DisplayName: &name, Handle: &handle}}})
	peopleFile := filepath.Join(dir, "people.json")
	os.WriteFile(peopleFile, people, 0o600)
	out := filepath.Join(dir, "out")

	r := sanitizeCmd(t, withKey, "", "--people", peopleFile, "-o", out, in)
	if r.code != 1 || !strings.Contains(r.stderr, "b.json: refusing to write") || !strings.Contains(r.stderr, "row seq 4 tool_result.payload.blob") ||
		!strings.Contains(r.stderr, "wrote nothing") || strings.Contains(strings.ToLower(r.stderr), "dana") {
		t.Fatalf("all or nothing: %+v", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a refused directory run wrote files")
	}
	r = sanitizeCmd(t, withKey, "", "--people", peopleFile, "--skip-refused", "-o", out, in)
	if r.code != 1 || !strings.Contains(r.stderr, "b.json: refusing to write") || !strings.Contains(r.stderr, "wrote the other 1") {
		t.Fatalf("--skip-refused: %+v", r)
	}
	a, err := os.ReadFile(filepath.Join(out, "a.json"))
	if err != nil || strings.Contains(string(a), "Dana") || strings.Contains(string(a), "Okonkwo") || !strings.Contains(string(a), "ask ") {
		t.Fatalf("a.json: %s %v", a, err)
	}
	if _, err := os.Stat(filepath.Join(out, "b.json")); !os.IsNotExist(err) {
		t.Fatal("the refused file was written")
	}
	if r := sanitizeCmd(t, withKey, "", "--people", filepath.Join(dir, "a.json-not-here"), filepath.Join(in, "a.json")); r.code != 2 || !strings.Contains(r.stderr, "--people") {
		t.Fatalf("a missing people file: %+v", r)
	}
	if r := sanitizeCmd(t, withKey, "", "--people", filepath.Join(in, "a.json"), filepath.Join(in, "a.json")); r.code != 2 || !strings.Contains(r.stderr, "not a people file") {
		t.Fatalf("a history file as people file: %+v", r)
	}
	if r := sanitizeCmd(t, nil, "", "check", peopleFile); r.code != 1 || !strings.Contains(r.stdout, "people file") {
		t.Fatalf("check of a people file: %+v", r)
	}
}

func TestOutputDirectoryIsMade(t *testing.T) {
	dir := t.TempDir()
	raw := sample(t, dir, "raw.json", 12)
	out := filepath.Join(dir, "new", "deeper", "clean.json")
	if r := sanitizeCmd(t, withKey, "", "-o", out, raw); r.code != 0 {
		t.Fatalf("sanitize -o into a new directory: %+v", r)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}

func TestCheckReadsTheRulesTheFileWasSanitizedWith(t *testing.T) {
	// A phrase the rules keep ("Jordan Park" is a listed given name and
	// surname) passes sanitize; check with the same rules passes it too,
	// and check without them names it.
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`{"version":1,"notNames":["Jordan Park"]}`), 0o600)
	in := filepath.Join(dir, "in.json")
	os.WriteFile(in, []byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"the Jordan Park office"}}]}`), 0o600)
	out := filepath.Join(dir, "out.json")
	if r := sanitizeCmd(t, withKey, "", "--rules", rules, "-o", out, in); r.code != 0 {
		t.Fatalf("sanitize: %+v", r)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "Jordan Park office") {
		t.Fatalf("the phrase in notNames was replaced: %s", b)
	}
	if r := sanitizeCmd(t, nil, "", "check", "--rules", rules, out); r.code != 0 {
		t.Fatalf("check --rules: %+v", r)
	}
	if r := sanitizeCmd(t, nil, "", "check", out); r.code != 1 || !strings.Contains(r.stdout, "notNames") {
		t.Fatalf("check without the rules: %+v; want the name found", r)
	}
	if r := sanitizeCmd(t, nil, "", "check", "--rules", filepath.Join(dir, "missing.json"), out); r.code != 2 {
		t.Fatalf("check --rules with a missing file: %+v; want exit 2", r)
	}
}
