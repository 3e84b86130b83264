package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Fingerprint is a digest of the suite's canonical definition (every
// profile with its options, environment, case with its matchers, the
// grader's name, the declared size) and of the contents of the source
// files it names. Any change to what the suite measures changes it, so
// that results under one fingerprint are alike; how it is shown (label,
// description, rank, tier) does not. Code is in it through Sources only:
// an environment's Setup or App, the app's prompts, the grading; name the
// files they live in.
func (c *Catalog) Fingerprint(s *Suite) (string, error) {
	def, err := s.definition()
	if err != nil {
		return "", fmt.Errorf("catalog: suite %s: %w", s.ID, err)
	}
	for _, shown := range []string{"label", "description", "rank", "tier"} {
		delete(def, shown)
	}
	names, err := c.sourceFiles(s)
	if err != nil {
		return "", err
	}
	files := map[string]string{}
	for _, name := range names {
		b, err := fs.ReadFile(c.Sources, name)
		if err != nil {
			return "", fmt.Errorf("catalog: suite %s: %w", s.ID, err)
		}
		sum := sha256.Sum256(b)
		files[name] = hex.EncodeToString(sum[:])
	}
	def["sourceDigests"] = files
	// encoding/json writes map keys sorted: the same definition gives the
	// same bytes.
	b, err := json.Marshal(def)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:8]), nil
}

// sourceFiles are the files the suite's Sources name: a name, or a
// pattern (path.Match's) whose matches are the files it names but the
// tests (*_test.go), which do not change what a suite measures. A name or
// a pattern that names no file is an error.
func (c *Catalog) sourceFiles(s *Suite) ([]string, error) {
	var out []string
	for _, src := range s.Sources {
		if c.Sources == nil {
			return nil, fmt.Errorf("catalog: suite %s names %s, and the catalog has no Sources", s.ID, src)
		}
		matches, err := fs.Glob(c.Sources, src)
		if err != nil {
			return nil, fmt.Errorf("catalog: suite %s: source %s: %w", s.ID, src, err)
		}
		matches = slices.DeleteFunc(matches, func(m string) bool { return strings.HasSuffix(m, "_test.go") && m != src })
		if len(matches) == 0 {
			return nil, fmt.Errorf("catalog: suite %s: source %s names no file", s.ID, src)
		}
		out = append(out, matches...)
	}
	return out, nil
}
