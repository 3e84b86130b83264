package cassette

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Index finds recorded interactions by canonical key in constant time.
// Identical requests are served in recorded order; once a key's
// recordings are used up, its last one serves again. It is safe for
// concurrent use.
//
// An index made by Open holds only the keys and where each interaction
// is in its file, and reads an interaction when it serves it, keeping up
// to 128 MB of them decoded.
type Index struct {
	mu    sync.Mutex
	byKey map[string][]*entry
	next  map[string]int
	all   []*entry

	// For an index made by Open, until it is read whole: the file, by
	// the descriptor opened then, so that a cassette written over since
	// is not mixed with the one indexed. It is never closed by the
	// index, which may be reading from it on another goroutine: the
	// descriptor closes when the index is collected.
	m        *Matcher
	name     string
	file     *os.File
	wholeErr error     // why the cassette could not be read whole
	cached   int64     // bytes of the interactions kept decoded
	keep     int64     // how many it may keep: keepDecoded
	buffers  sync.Pool // of *[]byte, to read interactions into
}

type entry struct {
	in       *Interaction // nil until read, in an index made by Open
	parts    []Part
	at       extent
	index    int  // its place in the cassette, for errors
	verified bool // read once, and its stored key found to be its key
	chunks   int  // its number of chunks, once verified
}

// keepDecoded is how many bytes of cassette an index made by Open keeps
// decoded once served; past it, an interaction is read again each time
// it is served. It bounds the memory of a replay at the start of which
// nothing of its cassette is read. Reading an interaction again costs
// over a quarter of what serving it does (a 12 KB stream, 14 µs), so
// the bound lets a replay that serves 10,000 such interactions over and
// over (117 MB of cassette) keep them all rather than read most again.
// Its memory then grows with what it has served, to about twice that
// (Go's collector keeps room for as much again).
const keepDecoded = 128 << 20

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byKey: map[string][]*entry{}, next: map[string]int{}}
}

// Open indexes the cassette in the named file for replay. A cassette in
// the layout Write produces is not read at all but for each interaction's
// place and stored key: an interaction is read when it is served, and
// checked then as Load checks it, its key recomputed with m. Should a
// stored key be stale (the request was edited by hand, or m is not the
// matcher that recorded it) or an interaction not read by the fast path,
// the index reads the cassette whole, as one from Load, and serves from
// that. A cassette in another layout is read whole at once.
//
// What Open does not see without reading the cassette: a request edited by
// hand into one that another interaction records, its key left as it was.
// Load would serve the edited one first, then the other; Open serves the
// other only, until a miss or a stale key makes it read the cassette.
//
// The error of a file that does not exist matches os.ErrNotExist.
func Open(m *Matcher, name string) (*Index, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	x := NewIndex()
	x.m, x.name, x.file, x.keep = m, name, f, keepDecoded
	exts, err := split(f)
	lazy := err == nil && len(exts) > 0
	for _, e := range exts {
		lazy = lazy && e.key != ""
	}
	if err != nil && !errors.Is(err, errLayout) {
		f.Close()
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	if !lazy {
		defer f.Close() // no one else reads it yet
		if err := x.readWhole(); err != nil {
			return nil, err
		}
		return x, nil
	}
	for i, e := range exts {
		en := &entry{at: e, index: i}
		x.byKey[e.key] = append(x.byKey[e.key], en)
		x.all = append(x.all, en)
	}
	return x, nil
}

// readWhole decodes the whole cassette from the index's file and indexes
// it anew, each key recomputed. The lock is held.
//
// Should the cassette not be read, the index stays as it was, each
// interaction still served as it is read, and the error is kept: it is
// the answer of every miss from then on.
func (x *Index) readWhole() error {
	if x.file == nil || x.wholeErr != nil {
		return x.wholeErr
	}
	b, err := io.ReadAll(io.NewSectionReader(x.file, 0, 1<<62))
	if err != nil {
		x.wholeErr = fmt.Errorf("cassette %s: %w", x.name, err)
		return x.wholeErr
	}
	c, err := decode(b, x.name)
	if err != nil {
		x.wholeErr = err
		return err
	}
	x.byKey, x.all, x.file = map[string][]*entry{}, nil, nil
	for i, in := range c.Interactions {
		x.add(x.m, in, i)
	}
	return nil
}

// Add indexes an interaction under its key, computed by m. It sets
// in.Key.
func (x *Index) Add(m *Matcher, in *Interaction) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.readWhole() // an index made by Open is read whole first, so that what it adds is not lost then
	x.add(m, in, len(x.all))
}

func (x *Index) add(m *Matcher, in *Interaction, index int) {
	key, parts := m.key(&in.Request, true)
	in.Key = key
	e := &entry{in: in, parts: parts, index: index}
	x.byKey[key] = append(x.byKey[key], e)
	x.all = append(x.all, e)
}

// Len returns how many interactions the index holds.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.all)
}

// Next returns the next recording for key, or false if there is none.
// The error is that of an interaction that cannot be read, which names
// the cassette and the line.
func (x *Index) Next(key string) (*Interaction, bool, error) {
	x.mu.Lock()
	list := x.byKey[key]
	if len(list) == 0 {
		defer x.mu.Unlock()
		if x.file == nil {
			return nil, false, nil
		}
		// Before a miss, the stored keys are checked: a request edited
		// by hand is under its old key until the cassette is read.
		if err := x.readWhole(); err != nil {
			return nil, false, err
		}
		if list = x.byKey[key]; len(list) == 0 {
			return nil, false, nil
		}
		return list[x.take(key, list)].in, true, nil
	}
	i := x.take(key, list)
	e, file, verified := list[i], x.file, list[i].verified
	if e.in != nil || file == nil {
		x.mu.Unlock()
		return e.in, true, nil
	}
	x.mu.Unlock()

	// The file is the one indexed, so an interaction read again is the
	// one checked the first time.
	in, err := x.read(file, e, verified)
	if err == nil && verified {
		return in, true, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err == nil {
		if x.m.Key(&in.Request) == key {
			e.verified, e.chunks = true, len(in.Chunks)
			if size := e.at.end - e.at.off; e.in == nil && x.cached+size <= x.keep && x.file == file {
				e.in = in
				x.cached += size
			}
			return in, true, nil
		}
	} else if !errors.Is(err, errLayout) {
		return nil, false, err
	}
	// A stale key, or a form the fast path does not read: read it all,
	// then look again, this key's turn given back.
	x.next[key] = i
	if err := x.readWhole(); err != nil {
		return nil, false, err
	}
	list = x.byKey[key]
	if len(list) == 0 {
		return nil, false, nil
	}
	return list[x.take(key, list)].in, true, nil
}

// take returns the place in list, key's recordings, of the one to serve
// now, and moves key's turn on: recorded order, then the last again. The
// lock is held.
func (x *Index) take(key string, list []*entry) int {
	i := min(x.next[key], len(list)-1)
	if i < len(list)-1 {
		x.next[key] = i + 1
	}
	return i
}

// read decodes an entry from the file, and checks it as Load does. Once
// verified, the entry's bytes are those decoded before, so they are not
// scanned again for what the fast decoder cannot read.
func (x *Index) read(f *os.File, e *entry, verified bool) (*Interaction, error) {
	size := int(e.at.end - e.at.off)
	buf, _ := x.buffers.Get().(*[]byte)
	if buf == nil || cap(*buf) < size {
		buf = new([]byte)
		*buf = make([]byte, size)
	}
	defer x.buffers.Put(buf)
	b := (*buf)[:size]
	if _, err := f.ReadAt(b, e.at.off); err != nil {
		return nil, fmt.Errorf("cassette %s: line %d: %w", x.name, e.at.line, err)
	}
	var in *Interaction
	var err error
	if verified {
		in, err = decodePrintable(b, e.chunks) // copies what it keeps
	} else {
		in, err = decodeSpan(b)
	}
	if err != nil {
		return nil, err
	}
	if err := check(x.name, e.index, e.at.line, in); err != nil {
		return nil, err
	}
	return in, nil
}

// Miss explains a request that has no recording: the nearest recording
// (the one with the most equal parts) and the names of the parts that
// differ from it. Nearest is nil when the index is empty.
type Miss struct {
	Nearest *Interaction `json:"-"`
	// NearestURL and NearestID name the nearest recording.
	NearestURL string   `json:"nearestUrl,omitempty"`
	NearestID  int      `json:"nearestId,omitempty"`
	Differ     []string `json:"differ,omitempty"`
}

// Nearest finds the recording closest to a request with the given parts.
// It scans every recording: a miss is the rare, slow path, and in an
// index made by Open, the first one reads the cassette whole. Its error
// is that of a cassette that cannot be read.
func (x *Index) Nearest(parts []Part) (Miss, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.readWhole(); err != nil {
		return Miss{}, err
	}
	want := map[string]string{}
	for _, p := range parts {
		want[p.Name] = p.Value
	}
	var best Miss
	bestEqual := -1
	for _, e := range x.all {
		equal := 0
		var differ []string
		have := map[string]bool{}
		for _, p := range e.parts {
			have[p.Name] = true
			if v, ok := want[p.Name]; ok && v == p.Value {
				equal++
			} else {
				differ = append(differ, p.Name)
			}
		}
		for _, p := range parts {
			if !have[p.Name] {
				differ = append(differ, p.Name)
			}
		}
		if equal > bestEqual {
			bestEqual = equal
			best = Miss{Nearest: e.in, NearestURL: e.in.Request.URL, NearestID: e.in.ID, Differ: differ}
		}
	}
	return best, nil
}
