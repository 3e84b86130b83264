package sanitize_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/sanitize"
)

// A directory of exports, sanitized as `sanitize -o out/ in/` does: every
// file learned first, so that a person named in one is found in all, then
// each sanitized; a file that is refused is not written.
func ExampleSanitizer() {
	in := map[string]string{
		"a.json": `{"version":1,"surface":"web","identities":[{"id":"i1","kind":"user","provider":"slack","providerSubjectId":"U0ADA00001","displayName":"Ada Quill","email":"ada.quill@corp.io"}],
			"events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"Ada asked for the rollout plan"}}]}`,
		"b.json": `{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"ping ada.quill@corp.io, or Ada Quill"}}]}`,
	}
	s, err := sanitize.New(sanitize.Options{Key: []byte("example-key-0123456789abcdef0123")})
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"a.json", "b.json"} {
		if err := s.Learn([]byte(in[name]), name); err != nil {
			panic(err)
		}
	}
	out := filepath.Join(os.TempDir(), "agentvcr-example-out")
	defer os.RemoveAll(out)
	for _, name := range []string{"a.json", "b.json"} {
		clean, err := s.Sanitize([]byte(in[name]), name)
		if errors.Is(err, sanitize.ErrLeak) {
			fmt.Println(name, "refused:", err)
			continue
		} else if err != nil {
			panic(err)
		}
		os.MkdirAll(out, 0o755)
		os.WriteFile(filepath.Join(out, name), clean, 0o644)
		fmt.Println(name, "written, Ada gone:", !strings.Contains(string(clean), "Ada"), "stamped:", strings.Contains(string(clean), `"sanitizer"`))
	}
	fmt.Println("files:", s.Report().Files)
	// Output:
	// a.json written, Ada gone: true stamped: true
	// b.json written, Ada gone: true stamped: true
	// files: 2
}

// A directory of exports, sanitized all or nothing: Dir learns every
// file, rewrites and checks each, and writes only when every file passes.
func ExampleSanitizer_Dir() {
	in, err := os.MkdirTemp("", "agentvcr-example-in")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(in)
	os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"version":1,"surface":"web","identities":[{"id":"i1","kind":"user","provider":"slack","providerSubjectId":"U0ADA00001","displayName":"Ada Quill"}],
		"events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"hi"}}]}`), 0o644)
	os.WriteFile(filepath.Join(in, "b.json"), []byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"ask Ada Quill"}}]}`), 0o644)
	out := filepath.Join(in, "..", filepath.Base(in)+"-out")
	defer os.RemoveAll(out)

	s, err := sanitize.New(sanitize.Options{Key: []byte("example-key-0123456789abcdef0123")})
	if err != nil {
		panic(err)
	}
	rep, err := s.Dir(context.Background(), in, out, sanitize.DirOptions{})
	if errors.Is(err, sanitize.ErrRefused) {
		for _, r := range rep.Refused {
			fmt.Println(r) // names the file, row and path, never the value
		}
		return
	} else if err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(filepath.Join(out, "b.json"))
	fmt.Println("written:", len(rep.Written), "Ada gone from b.json:", !strings.Contains(string(b), "Ada"))
	// Output:
	// written: 2 Ada gone from b.json: true
}
