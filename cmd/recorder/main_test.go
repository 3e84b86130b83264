package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/loader"
	"github.com/agentvcr/agentvcr/sanitize"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type result struct {
	code           int
	stdout, stderr string
}

// receive waits for a value from ch; without one within a minute it
// fails the test, saying what did not happen.
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s: not within a minute", what)
		panic("unreachable")
	}
}

func recorder(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func TestExportThenLoad(t *testing.T) {
	srcURL, src := juniortest.Database(t)
	dstURL, dst := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	web, _ := juniortest.WebLaunch()
	juniortest.Insert(t, src, slack)
	juniortest.Insert(t, src, web)
	dir := t.TempDir()

	file := filepath.Join(dir, "one.json")
	if r := recorder(t, "", "export", "--database-url", srcURL, "--conversation", slack.ID, "--with-identities", "-o", file); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	t.Setenv("DATABASE_URL", dstURL)
	r := recorder(t, "", "load", "--json", file)
	if r.code != 0 {
		t.Fatalf("load: %+v", r)
	}
	var res loader.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("load --json printed %q: %v", r.stdout, err)
	}
	if res.ConversationID != slack.ID || res.Status != "loaded" || res.Identities != 2 || res.File != file {
		t.Fatalf("load result %+v", res)
	}
	r = recorder(t, "", "load", file)
	if r.code != 0 || strings.TrimSpace(r.stdout) != slack.ID || !strings.Contains(r.stderr, "already loaded") {
		t.Fatalf("second load: %+v", r)
	}

	// Bulk, then a pipe from export to load.
	out := filepath.Join(dir, "bulk")
	r = recorder(t, "", "export", "--database-url", srcURL, "--all", "--surface", "web", "--out-dir", out)
	if want := filepath.Join(out, "local_web_0c3e1e9a4d97bb760f0656d0.json"); r.code != 0 || strings.TrimSpace(r.stdout) != want {
		t.Fatalf("bulk export: %+v; want %s", r, want)
	}
	r = recorder(t, "", "export", "--database-url", srcURL, "--conversation", web.ID)
	if r.code != 0 {
		t.Fatalf("export to stdout: %+v", r)
	}
	doc := r.stdout
	r = recorder(t, doc, "load", "--conversation-id", "local:web:piped", "-")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "local:web:piped" {
		t.Fatalf("load from stdin: %+v", r)
	}
	r = recorder(t, strings.Replace(doc, `"conversationId"`, `"sourceId"`, 1), "load", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "no conversation id") {
		t.Fatalf("load from stdin without an id: %+v", r)
	}
	var n int
	if err := dst.QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = 'local:web:piped'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("piped load wrote %d rows (%v)", n, err)
	}
}

func TestExportSanitizedNeverWritesRawData(t *testing.T) {
	srcURL, src := juniortest.Database(t)
	dstURL, _ := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	juniortest.Insert(t, src, slack)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "sanitize.key")
	if err := os.WriteFile(keyFile, []byte("recorder-test-key-0123456789abcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "deploy.json")
	r := recorder(t, "", "export", "--database-url", srcURL, "--conversation", slack.ID, "--sanitize", "--key-file", keyFile, "-o", out)
	if r.code != 0 {
		t.Fatalf("export --sanitize: %+v", r)
	}
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"Ada Quill", "ada.quill", "U0ADA00001", "C0AGENTVCR", "T0AGENTVCR", "Bo Rivet"} {
		if strings.Contains(string(doc), raw) {
			t.Errorf("%q is in the sanitized export", raw)
		}
	}
	if info, _ := os.Stat(out); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v; want 0644 for a file meant for git", info.Mode().Perm())
	}
	found, err := leakcheck.Check(doc, out, sanitize.DefaultRules().LeakRules())
	if err != nil || len(found) != 0 {
		t.Fatalf("check: %v %v", found, err)
	}
	// It still loads, under the sanitized conversation id.
	r = recorder(t, "", "load", "--database-url", dstURL, "--json", out)
	if r.code != 0 || !strings.Contains(r.stdout, `"conversationId":"slack:C`) || strings.Contains(r.stdout, "C0AGENTVCR") {
		t.Fatalf("load of the sanitized export: %+v", r)
	}

	// A refusal writes nothing: a person's handle inside base64 after a
	// line of another length, which the rewrite cannot write again and
	// the leak check decodes.
	blob := base64.StdEncoding.EncodeToString([]byte("note: ")) + "\n" + base64.StdEncoding.EncodeToString([]byte("owner bo.rivet"))
	if _, err := src.Exec(context.Background(), `UPDATE junior_conversation_events SET payload = payload || jsonb_build_object('blob', $2::text)
		WHERE conversation_id = $1 AND type = 'turn_routed'`, slack.ID, blob); err != nil {
		t.Fatal(err)
	}
	refused := filepath.Join(dir, "refused.json")
	r = recorder(t, "", "export", "--database-url", srcURL, "--conversation", slack.ID, "--sanitize", "--key-file", keyFile, "-o", refused)
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to write") || strings.Contains(r.stderr, "bo.rivet") {
		t.Fatalf("refused export: %+v", r)
	}
	if _, err := os.Stat(refused); !os.IsNotExist(err) {
		t.Fatal("a refused export left a file")
	}
	if r := recorder(t, "", "export", "--database-url", srcURL, "--conversation", slack.ID, "--key-file", keyFile); r.code != 2 {
		t.Fatalf("--key-file without --sanitize: %+v", r)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	dbURL, _ := juniortest.Database(t)
	dir := t.TempDir()
	badVersion := filepath.Join(dir, "v2.json")
	if err := os.WriteFile(badVersion, []byte(`{"version":2,"surface":"web","events":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	missingOut := filepath.Join(dir, "missing.json")
	noTables := pgtest.NewDatabase(t)
	idsFile := filepath.Join(t.TempDir(), "ids.txt")
	os.WriteFile(idsFile, []byte("slack:CNONE:1.1\nslack:CNONE:2.2\nslack:CNONE:1.1\n"), 0o600) // the repeat is exported once
	bulkDir := filepath.Join(t.TempDir(), "out")
	t.Setenv("DATABASE_URL", "")
	tests := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"unknown command", []string{"bogus"}, 2, []string{"unknown command"}},
		{"unknown flag", []string{"export", "--bogus"}, 2, []string{"unknown flag"}},
		{"no database", []string{"export", "--conversation", "x"}, 2, []string{"--database-url", "DATABASE_URL"}},
		{"bad database url", []string{"export", "--conversation", "x", "--database-url", "postgres://a b"}, 2, []string{"--database-url"}},
		{"refused connection", []string{"export", "--conversation", "x", "--database-url", "postgres://postgres@127.0.0.1:1/none?sslmode=disable"}, 1,
			[]string{"connect to database none at 127.0.0.1:1", "check --database-url"}},
		{"missing conversation", []string{"export", "--database-url", dbURL, "--conversation", "slack:CNONE:1.1", "-o", missingOut}, 1,
			[]string{"slack:CNONE:1.1", "conversation not found"}},
		{"two selections", []string{"export", "--conversation", "x", "--all"}, 2, []string{"exactly one"}},
		{"bulk without dir", []string{"export", "--all"}, 2, []string{"--out-dir"}},
		{"bad since", []string{"export", "--since", "yesterday", "--out-dir", dir}, 2, []string{"--since", "yesterday"}},
		{"bad surface", []string{"export", "--all", "--surface", "teams", "--out-dir", dir}, 2, []string{"teams"}},
		{"limit with one conversation", []string{"export", "--conversation", "x", "--limit", "3"}, 2, []string{"--limit", "--conversation"}},
		{"negative limit", []string{"export", "--all", "--limit", "-1", "--out-dir", dir}, 2, []string{"--limit -1", "positive"}},
		{"matches nothing", []string{"export", "--database-url", dbURL, "--since", "2h", "--surface", "web", "--out-dir", dir}, 0,
			[]string{"no conversation matches --since 2h --surface web; nothing written"}},
		{"not the product's database", []string{"export", "--database-url", noTables, "--conversation", "x"}, 1,
			[]string{"lacks the tables of profile junior", "--database-url", "recorder schema"}},
		{"not the product's database, bulk", []string{"export", "--database-url", noTables, "--all", "--out-dir", dir}, 1,
			[]string{"lacks the tables of profile junior"}},
		{"bulk failures", []string{"export", "--database-url", dbURL, "--ids-file", idsFile, "--out-dir", bulkDir}, 1,
			[]string{"export slack:CNONE:1.1: conversation not found", "export slack:CNONE:2.2: conversation not found",
				"0 of 2 conversations written to " + bulkDir + "; 2 failed (above)"}},
		{"load nothing", []string{"load"}, 2, []string{"FILE"}},
		{"env, not a proxy URL", []string{"env", "--proxy", "notaurl"}, 2, []string{`--proxy "notaurl"`, "http://host:port"}},
		{"id for two files", []string{"load", "--conversation-id", "x", "a", "b"}, 2, []string{"one FILE"}},
		{"wrong version", []string{"load", "--database-url", dbURL, badVersion}, 2, []string{badVersion, "version: 2 is not supported"}},
		{"unknown profile", []string{"load", "--database-url", dbURL, "--profile", "zendesk", badVersion}, 2, []string{"unknown schema profile", "junior"}},
		{"missing file", []string{"load", "--database-url", dbURL, filepath.Join(dir, "nope.json")}, 2, []string{"nope.json", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recorder(t, "", tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code %d; want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			for _, s := range tt.says {
				if n := strings.Count(r.stderr, s); n != 1 {
					t.Errorf("stderr %q has %q %d times; want once", r.stderr, s, n)
				}
			}
		})
	}
	if _, err := os.Stat(missingOut); !os.IsNotExist(err) {
		t.Errorf("a failed export left %s behind", missingOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("failed commands left files: %v", entries)
	}
}

func TestSchemaPrintAndApply(t *testing.T) {
	r := recorder(t, "", "schema")
	if r.code != 0 || !strings.Contains(r.stdout, "CREATE TABLE IF NOT EXISTS junior_conversation_events") {
		t.Fatalf("schema: %+v", r)
	}
	url := pgtest.NewDatabase(t)
	for range 2 {
		if r := recorder(t, "", "schema", "--apply", "--database-url", url); r.code != 0 {
			t.Fatalf("schema --apply: %+v", r)
		}
	}
	if r := recorder(t, "", "schema", "--profile", "zendesk"); r.code != 2 {
		t.Fatalf("unknown profile: %+v", r)
	}
}

func TestDemo(t *testing.T) {
	for _, sample := range []string{"slack-thread.json", "web-launch.json"} {
		r := recorder(t, "", "demo", "--sample", sample)
		if r.code != 0 || !strings.Contains(r.stdout, "agree in every column") || !strings.Contains(r.stdout, "removed its files") {
			t.Fatalf("demo %s: %+v", sample, r)
		}
	}
}

func TestCA(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	r := recorder(t, "", "ca")
	path := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasSuffix(path, filepath.Join("agentvcr", "ca.pem")) {
		t.Fatalf("ca: %+v", r)
	}
	pem := recorder(t, "", "ca", "--pem")
	onDisk, err := os.ReadFile(path)
	if pem.code != 0 || err != nil || pem.stdout != string(onDisk) || !strings.HasPrefix(pem.stdout, "-----BEGIN CERTIFICATE-----") {
		t.Fatalf("ca --pem: %+v (%v)", pem, err)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"schema", "export", "load", "demo", "ca", "proxy", "env", "eval", "catalog", "vet"} {
		r := recorder(t, "", cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help: %+v", cmd, r)
		}
	}
}

func TestExportPeopleAndSanitizeLearnsTheWholeDatabase(t *testing.T) {
	srcURL, src := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	juniortest.Insert(t, src, slack)
	// A person of the workspace who took no part in the conversation, and
	// a user with no identity, both named in it.
	ctx := context.Background()
	if _, err := src.Exec(ctx, `INSERT INTO junior_users (id, primary_email, display_name) VALUES ('user-dana', 'dana.okonkwo@corp.example.net', 'Dana Okonkwo');
		INSERT INTO junior_identities (id, kind, provider, provider_tenant_id, provider_subject_id, display_name, handle, email)
			VALUES ('identity-oluwa', 'user', 'slack', 'T0AGENTVCR', 'U0OLUWA001', 'Oluwaseun Adeyemi', 'seun.a', 'seun@corp.io')`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Exec(ctx, `UPDATE junior_conversation_events SET payload = payload || '{"note": "draft a note to Dana Okonkwo and Oluwaseun Adeyemi (seun.a)"}'
		WHERE conversation_id = $1 AND type = 'turn_routed'`, slack.ID); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	people := filepath.Join(dir, "people.json")
	r := recorder(t, "", "export", "--database-url", srcURL, "--people", people)
	if r.code != 0 || !strings.Contains(r.stderr, "keep it out of git") {
		t.Fatalf("export --people: %+v", r)
	}
	if info, err := os.Stat(people); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("people file: %v %v; want mode 0600", info, err)
	}
	doc, _ := os.ReadFile(people)
	if found, err := leakcheck.Check(doc, people, sanitize.DefaultRules().LeakRules()); err != nil || len(found) != 1 || !strings.Contains(found[0].Problem, "people file") {
		t.Fatalf("check of a people file: %+v %v", found, err)
	}
	keyFile := filepath.Join(dir, "k")
	os.WriteFile(keyFile, []byte("recorder-test-key-0123456789abcd"), 0o600)
	out := filepath.Join(dir, "out.json")
	if r := recorder(t, "", "export", "--database-url", srcURL, "--conversation", slack.ID, "--sanitize", "--key-file", keyFile, "-o", out); r.code != 0 {
		t.Fatalf("export --sanitize: %+v", r)
	}
	clean, _ := os.ReadFile(out)
	for _, gone := range []string{"Dana", "Okonkwo", "Oluwaseun", "Adeyemi", "seun.a"} {
		if strings.Contains(string(clean), gone) {
			t.Errorf("%s, a person of the database only, survived export --sanitize", gone)
		}
	}
	if !strings.Contains(string(clean), "draft a note to ") {
		t.Fatal("the note is gone")
	}
}

func TestLoadNamesEveryFailedFileAndLoadsTheRest(t *testing.T) {
	url, _ := juniortest.Database(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	good := filepath.Join("..", "..", "recordings", "samples", "web-launch.json")
	r := recorder(t, "", "load", "--database-url", url, missing, dir, good)
	if r.code != 2 || !strings.Contains(r.stderr, missing) || !strings.Contains(r.stderr, dir) || !strings.Contains(r.stderr, "2 of 3 files") {
		t.Fatalf("load missing, dir, good: %+v", r)
	}
	if !strings.Contains(r.stdout, "local:web:") {
		t.Fatalf("the good file was not loaded: %+v", r)
	}
	if r := recorder(t, "", "load", "--database-url", url, missing); r.code != 2 || !strings.Contains(r.stderr, missing) {
		t.Fatalf("load of a missing file: %+v", r)
	}
}

// recorder --help describes all it does: every command is named in the
// root's description, not only those that move conversations.
func TestTheRootHelpDescribesEveryCommand(t *testing.T) {
	root := newRoot(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	words := strings.FieldsFunc(root.Long, func(r rune) bool { return !unicode.IsLetter(r) })
	for _, c := range root.Commands() {
		if !slices.Contains(words, c.Name()) {
			t.Errorf("recorder --help does not describe %s", c.Name())
		}
	}
}
