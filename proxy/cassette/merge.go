package cassette

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/agentvcr/agentvcr/internal/filelock"
)

// Many recording proxies may write one cassette directory at once (a
// test runner's workers, each behind a proxy of its own). A proxy that
// wrote the cassettes it holds in memory would write over what the others
// recorded since it started; Merge instead adds to what the file holds
// now, under a lock the writers take turns at.
//
// One file per rule, merged, rather than a file per process: the
// directory stays what go-vcr, a reviewer and `recorder prune` know, one
// cassette per rule whatever the number of workers that recorded it, and
// a re-recording can replace what it re-records.

// LockTimeout is how long Merge waits, by default, for another writer of
// the same cassette to finish.
const LockTimeout = time.Minute

// MergeOptions says how Merge places what it adds among what the file
// holds. The zero value appends.
type MergeOptions struct {
	// Own are the ids that earlier merges of this writer gave its
	// interactions (what Merge returned). An added interaction goes at
	// the end of the cassette, but for one whose request this writer has
	// recorded before and another writer has recorded since: that one goes
	// right after this writer's last recording of it. Each writer's
	// recordings of one request thus stay together, in the order it made
	// them, which is the order a replay serves them in; a replay gets one
	// writer's sequence (a poll answered "pending" then "done"), never two
	// interleaved.
	Own map[int]bool
	// Replaced, when not nil, is asked about each interaction in the
	// file: those it returns true for are dropped. A re-recording passes
	// one that knows what was recorded before it started.
	Replaced func(*Interaction) bool
	// Timeout bounds the wait for the lock; zero means LockTimeout.
	Timeout time.Duration
}

// Merge adds prepared interactions (see Prepare) to the cassette in the
// named file, which other processes may be adding to at the same time.
// Under an advisory lock on a file beside it (".NAME.lock", left in
// place), it reads what the file holds, adds the interactions after it
// (see MergeOptions.Own), and writes the whole atomically, mode 0600.
// Nothing already in the file moves or changes its id; each added
// interaction gets the next id after every id the file holds, and Merge
// returns them, in the order of add. The interactions passed in are not
// changed: the file gets copies with those ids.
//
// A file that cannot be read is left as it is: Merge returns the error
// and writes nothing. The error of a lock held past the timeout matches
// filelock.ErrTimeout.
func Merge(name string, add []*Interaction, o MergeOptions) ([]int, error) {
	timeout := o.Timeout
	if timeout == 0 {
		timeout = LockTimeout
	}
	unlock, err := filelock.Lock(lockName(name), timeout)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	defer unlock()
	c, err := Load(name)
	if errors.Is(err, os.ErrNotExist) {
		c, err = &Cassette{}, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []int
	c.Interactions, ids = merge(c.Interactions, add, o)
	if err := c.Write(name); err != nil {
		return nil, err
	}
	return ids, nil
}

// lockName is the lock file of the cassette in the named file.
func lockName(name string) string {
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".lock")
}

// merge is Merge's result: have, less what o.Replaced drops, with copies
// of add placed in it, and the ids the copies got.
func merge(have, add []*Interaction, o MergeOptions) ([]*Interaction, []int) {
	next := 0
	for _, in := range have {
		next = max(next, in.ID+1)
	}
	kept := make([]*Interaction, 0, len(have))
	for _, in := range have {
		if o.Replaced == nil || !o.Replaced(in) {
			kept = append(kept, in)
		}
	}
	// Per request key: where in kept this writer's last recording of it
	// is, and whether another writer's recording of it came after.
	last := map[string]int{}
	other := map[string]bool{}
	for i, in := range kept {
		if in.Key == "" {
			continue
		}
		if o.Own[in.ID] {
			last[in.Key], other[in.Key] = i, false
		} else if _, ok := last[in.Key]; ok {
			other[in.Key] = true
		}
	}
	after := map[int][]*Interaction{} // added right after kept[i]
	var tail []*Interaction
	ids := make([]int, len(add))
	for i, in := range add {
		c := *in
		c.ID, ids[i] = next, next
		next++
		if at, ok := last[c.Key]; ok && other[c.Key] && c.Key != "" {
			after[at] = append(after[at], &c)
			continue
		}
		tail = append(tail, &c)
		delete(last, c.Key) // this writer's last of it is now at the end
	}
	out := make([]*Interaction, 0, len(kept)+len(add))
	for i, in := range kept {
		out = append(out, in)
		out = append(out, after[i]...)
	}
	return append(out, tail...), ids
}
