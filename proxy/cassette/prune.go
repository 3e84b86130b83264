package cassette

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnknownRecording is returned by Prune when a run's used ids name a
// recording a cassette does not have: the used-file is from other
// cassettes, or from these before they were pruned, and pruning by it
// would remove what a run needs.
var ErrUnknownRecording = errors.New("a used-file names a recording the cassette does not have")

// Prune removes from the cassettes in dir (<rule>.yaml) every interaction
// no run used: used maps a rule to the ids its runs replayed or recorded.
// A cassette of a rule no run mentions is left alone, and one left empty
// is deleted. It returns how many interactions it removed, by rule, and
// with dryRun changes nothing. Every cassette is read and every id checked
// before anything is written: an error leaves the cassettes as they were.
func Prune(dir string, used map[string]map[int]bool, dryRun bool) (map[string]int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	type change struct {
		file string
		c    *Cassette
		kept []*Interaction
	}
	var changes []change
	removed := map[string]int{}
	for _, f := range files {
		rule := strings.TrimSuffix(filepath.Base(f), ".yaml")
		ids, ok := used[rule]
		if !ok {
			continue
		}
		c, err := Load(f)
		if err != nil {
			return nil, err
		}
		have := map[int]bool{}
		var kept []*Interaction
		for _, in := range c.Interactions {
			have[in.ID] = true
			if ids[in.ID] {
				kept = append(kept, in)
			}
		}
		for id := range ids {
			if !have[id] {
				return nil, fmt.Errorf("%w: rule %s, id %d, in %s (it has %d recordings): prune with the used-files of runs against the cassettes as they are now",
					ErrUnknownRecording, rule, id, f, len(c.Interactions))
			}
		}
		if n := len(c.Interactions) - len(kept); n > 0 {
			removed[rule] = n
			changes = append(changes, change{f, c, kept})
		}
	}
	if dryRun {
		return removed, nil
	}
	for _, ch := range changes {
		if len(ch.kept) == 0 {
			if err := os.Remove(ch.file); err != nil {
				return removed, err
			}
			continue
		}
		for i, in := range ch.kept {
			in.ID = i
		}
		ch.c.Interactions = slices.Clip(ch.kept)
		if err := ch.c.Save(ch.file); err != nil {
			return removed, fmt.Errorf("prune %s: %w", ch.file, err)
		}
	}
	return removed, nil
}
