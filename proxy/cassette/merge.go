package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

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
	// Replace are interactions this writer read from the file before, by
	// id, that the added ones record again: each is dropped if the file
	// still holds it, unchanged (the same request and response under its
	// id). What other writers added since is never dropped.
	Replace map[int]*Interaction
	// Timeout bounds the wait for the lock; zero means LockTimeout.
	Timeout time.Duration
}

// Merge adds prepared interactions (see Prepare) to the cassette in the
// named file, which other processes may be adding to at the same time.
// Under an advisory lock on a file beside it (".NAME.lock", left in
// place), it reads what the file holds, adds the interactions after it
// (see MergeOptions.Own), and writes the whole atomically, mode 0600.
// Nothing already in the file moves, changes its id or is decoded and
// encoded again: a file in the layout Write produces keeps its bytes, and
// a merge costs the encoding of what it adds and a copy of the rest.
// Each added interaction gets the next id after every id the file
// holds, and Merge returns them, in the order of add. The interactions
// passed in are not changed: the file gets copies with those ids.
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
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		b, err = []byte("version: 2\ninteractions: []\n"), nil
	}
	if err != nil {
		return nil, err
	}
	out, ids, err := mergeLayout(b, add, o)
	if errors.Is(err, errLayout) {
		out, ids, err = mergeDecoded(b, name, add, o)
	}
	if err != nil {
		return nil, err
	}
	if err := write(name, out); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	return ids, nil
}

// lockName is the lock file of the cassette in the named file.
func lockName(name string) string {
	return filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".lock")
}

// item is an interaction of a merge: one of the file's, as its bytes in
// the fast path (raw) or decoded (in), or one added (in, a copy).
type item struct {
	id  int
	key string
	in  *Interaction
	raw []byte
}

// mergeLayout merges into a cassette in Write's layout by its bytes: it
// cuts the file into its interactions, reading only the id and the key of
// each (and whole, those o.Replace names), and encodes only what it adds.
// It returns errLayout for a file in another layout.
func mergeLayout(b []byte, add []*Interaction, o MergeOptions) ([]byte, []int, error) {
	exts, err := split(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	have := make([]item, 0, len(exts))
	next := 0
	for _, e := range exts {
		raw := b[e.off:e.end]
		idText, _, ok := bytes.Cut(raw[len(itemPrefix):], []byte("\n"))
		idText, ok2 := bytes.CutPrefix(idText, []byte("id: "))
		id, ok3 := plainInt(idText)
		if !ok || !ok2 || !ok3 {
			return nil, nil, errLayout
		}
		next = max(next, id+1)
		if old := o.Replace[id]; old != nil {
			if in, err := decodeSpan(raw); err == nil && unchanged(old, in) {
				continue
			}
		}
		have = append(have, item{id: id, key: e.key, raw: raw})
	}
	items, ids := place(have, next, add, o.Own)
	if len(items) == 0 {
		return []byte("version: 2\ninteractions: []\n"), ids, nil
	}
	out := bytes.NewBuffer(make([]byte, 0, len(b)+len(add)*2048))
	out.WriteString("version: 2\ninteractions:\n")
	for _, it := range items {
		if it.raw != nil {
			out.Write(it.raw)
			continue
		}
		enc, err := yaml.Marshal(encodeCassette(&Cassette{Version: FormatVersion, Interactions: []*Interaction{it.in}}))
		if err != nil {
			return nil, nil, err
		}
		enc, ok := bytes.CutPrefix(enc, []byte("version: 2\ninteractions:\n"+itemPrefix))
		if !ok {
			return nil, nil, errLayout
		}
		out.WriteString(itemPrefix)
		out.Write(enc)
	}
	return out.Bytes(), ids, nil
}

// mergeDecoded merges into a cassette in any layout: it decodes the file
// and encodes the result whole.
func mergeDecoded(b []byte, name string, add []*Interaction, o MergeOptions) ([]byte, []int, error) {
	c, err := decode(b, name)
	if err != nil {
		return nil, nil, err
	}
	have := make([]item, 0, len(c.Interactions))
	next := 0
	for _, in := range c.Interactions {
		next = max(next, in.ID+1)
		if old := o.Replace[in.ID]; old != nil && unchanged(old, in) {
			continue
		}
		have = append(have, item{id: in.ID, key: in.Key, in: in})
	}
	items, ids := place(have, next, add, o.Own)
	c.Interactions = make([]*Interaction, len(items))
	for i, it := range items {
		c.Interactions[i] = it.in
	}
	c.Version = FormatVersion
	out, err := yaml.Marshal(encodeCassette(c))
	if err != nil {
		return nil, nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	return out, ids, nil
}

// unchanged reports whether an interaction read from a cassette is one
// read from it earlier under the same id: ids are not reused, so what is
// left to tell is a file changed by other means.
func unchanged(old, now *Interaction) bool {
	return old.Request.Method == now.Request.Method && old.Request.URL == now.Request.URL && old.Request.Body == now.Request.Body &&
		old.Response.Code == now.Response.Code && old.Response.Body == now.Response.Body
}

// place returns have with copies of add placed in it (see
// MergeOptions.Own), the copies numbered from next on, and their ids.
func place(have []item, next int, add []*Interaction, own map[int]bool) ([]item, []int) {
	// Per request key: where in have this writer's last recording of it
	// is, and whether another writer's recording of it came after.
	last := map[string]int{}
	other := map[string]bool{}
	for i, it := range have {
		if it.key == "" {
			continue
		}
		if own[it.id] {
			last[it.key], other[it.key] = i, false
		} else if _, ok := last[it.key]; ok {
			other[it.key] = true
		}
	}
	after := map[int][]item{} // added right after have[i]
	var tail []item
	ids := make([]int, len(add))
	for i, in := range add {
		c := *in
		c.ID, ids[i] = next, next
		next++
		it := item{id: c.ID, key: c.Key, in: &c}
		if at, ok := last[c.Key]; ok && other[c.Key] && c.Key != "" {
			after[at] = append(after[at], it)
			continue
		}
		tail = append(tail, it)
		delete(last, c.Key) // this writer's last of it is now at the end
	}
	out := make([]item, 0, len(have)+len(add))
	for i, it := range have {
		out = append(out, it)
		out = append(out, after[i]...)
	}
	return append(out, tail...), ids
}
