package sanitize_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/sanitize"
)

// dirFiles are a directory run's inputs: a.json names a person only in
// free text; b.json knows her as an identity; c.json holds her handle in
// base64 of lines of two lengths, which the rewrite cannot write again,
// so the leak check refuses it.
func dirFiles(refused bool) map[string]string {
	files := map[string]string{
		"a.json": `{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"ping Dana Okonkwo about it"}}]}`,
		"sub/b.json": `{"version":1,"surface":"web","identities":[{"id":"i1","kind":"user","provider":"slack","providerSubjectId":"U0DANA0001","displayName":"Dana Okonkwo","email":"dana.okonkwo@corp.io"}],
			"events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"hi"}}]}`,
		"notes.txt": "not recorded history",
	}
	if refused {
		blob := base64.StdEncoding.EncodeToString([]byte("note: ")) + `\n` + base64.StdEncoding.EncodeToString([]byte("dana.okonkwo"))
		files["c.json"] = `{"version":1,"surface":"web","events":[{"seq":4,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"blob":"` + blob + `"}}]}`
	}
	return files
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDir(t *testing.T) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name     string
		files    map[string]string
		ctx      context.Context
		skip     bool
		wantErr  error
		written  []string // relative to the output
		refused  []string // files named by the report's refusals
		noOutput bool
	}{
		{name: "every file passes", files: dirFiles(false), written: []string{"a.json", "sub/b.json"}},
		{name: "one refused writes nothing", files: dirFiles(true), wantErr: sanitize.ErrRefused, refused: []string{"c.json"}, noOutput: true},
		{name: "skip refused writes the others", files: dirFiles(true), skip: true, wantErr: sanitize.ErrRefused, written: []string{"a.json", "sub/b.json"}, refused: []string{"c.json"}},
		{name: "no json file", files: map[string]string{"notes.txt": "x"}, wantErr: sanitize.ErrNoFiles, noOutput: true},
		{name: "interrupted", files: dirFiles(false), ctx: canceled, wantErr: context.Canceled, noOutput: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := writeTree(t, tt.files)
			out := filepath.Join(t.TempDir(), "out")
			s, err := sanitize.New(sanitize.Options{Key: []byte("dir-test-key-0123456789abcdef012")})
			if err != nil {
				t.Fatal(err)
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			rep, err := s.Dir(ctx, in, out, sanitize.DirOptions{SkipRefused: tt.skip})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Dir: %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(strings.ToLower(err.Error()), "dana") {
				t.Fatalf("the error holds a name: %v", err)
			}
			var refused []string
			for _, r := range rep.Refused {
				rel, _ := filepath.Rel(in, r.File)
				refused = append(refused, filepath.ToSlash(rel))
				if strings.Contains(strings.ToLower(r.Error()), "dana") {
					t.Fatalf("a refusal holds a name: %v", r)
				}
			}
			if !slices.Equal(refused, tt.refused) {
				t.Fatalf("refused %q, want %q", refused, tt.refused)
			}
			if tt.noOutput {
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the run wrote its output directory: %v", err)
				}
				return
			}
			var written []string
			for _, w := range rep.Written {
				rel, _ := filepath.Rel(out, w)
				written = append(written, filepath.ToSlash(rel))
			}
			if !slices.Equal(written, tt.written) {
				t.Fatalf("written %q, want %q", written, tt.written)
			}
			for _, name := range tt.written {
				b, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
				if err != nil {
					t.Fatal(err)
				}
				// a.json names her only in free text; the identity in
				// sub/b.json, learned first, is what finds her there too.
				if low := strings.ToLower(string(b)); strings.Contains(low, "okonkwo") || strings.Contains(low, "dana") {
					t.Fatalf("%s still names her: %s", name, b)
				}
			}
			for _, name := range tt.refused {
				if _, err := os.Stat(filepath.Join(out, name)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("refused %s was written", name)
				}
			}
		})
	}
}

func TestDirUnreadableFile(t *testing.T) {
	in := writeTree(t, dirFiles(false))
	if err := os.Symlink(filepath.Join(in, "gone"), filepath.Join(in, "z.json")); err != nil {
		t.Fatal(err)
	}
	s, _ := sanitize.New(sanitize.Options{})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := s.Dir(t.Context(), in, out, sanitize.DirOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dangling file: %v, want a not-exist error", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a run that could not read a file wrote its output")
	}
}
