package sanitize_test

import (
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
