package cassette

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Prune removes from the cassettes in dir (<rule>.yaml) every interaction
// no run used: used maps a rule to the ids its runs replayed or recorded.
// A cassette of a rule no run mentions is left alone, and one left empty
// is deleted. It returns how many interactions it removed, by rule, and
// with dryRun changes nothing.
func Prune(dir string, used map[string]map[int]bool, dryRun bool) (map[string]int, error) {
	removed := map[string]int{}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		rule := strings.TrimSuffix(filepath.Base(f), ".yaml")
		ids, ok := used[rule]
		if !ok {
			continue
		}
		c, err := Load(f)
		if err != nil {
			return removed, err
		}
		var kept []*Interaction
		for _, in := range c.Interactions {
			if ids[in.ID] {
				kept = append(kept, in)
			}
		}
		if n := len(c.Interactions) - len(kept); n > 0 {
			removed[rule] = n
		} else {
			continue
		}
		if dryRun {
			continue
		}
		if len(kept) == 0 {
			if err := os.Remove(f); err != nil {
				return removed, err
			}
			continue
		}
		for i, in := range kept {
			in.ID = i
		}
		c.Interactions = kept
		if err := c.Save(f); err != nil {
			return removed, fmt.Errorf("prune %s: %w", f, err)
		}
	}
	return removed, nil
}
