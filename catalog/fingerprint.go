package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
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
	def := s.definition()
	for _, shown := range []string{"label", "description", "rank", "tier"} {
		delete(def, shown)
	}
	files := map[string]string{}
	for _, src := range s.Sources {
		if c.Sources == nil {
			return "", fmt.Errorf("catalog: suite %s names %s, and the catalog has no Sources", s.ID, src)
		}
		b, err := fs.ReadFile(c.Sources, src)
		if err != nil {
			return "", fmt.Errorf("catalog: suite %s: %w", s.ID, err)
		}
		sum := sha256.Sum256(b)
		files[src] = hex.EncodeToString(sum[:])
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
