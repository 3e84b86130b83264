package cassette

import "sync"

// Index finds recorded interactions by canonical key in constant time.
// Identical requests are served in recorded order; once a key's
// recordings are used up, its last one serves again. It is safe for
// concurrent use.
type Index struct {
	mu    sync.Mutex
	byKey map[string][]entry
	next  map[string]int
	all   []entry
}

type entry struct {
	in    *Interaction
	parts []Part
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{byKey: map[string][]entry{}, next: map[string]int{}}
}

// Add indexes an interaction under its key, computed by m. It sets
// in.Key.
func (x *Index) Add(m *Matcher, in *Interaction) {
	key, parts := m.Key(&in.Request)
	in.Key = key
	x.mu.Lock()
	defer x.mu.Unlock()
	e := entry{in, parts}
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
func (x *Index) Next(key string) (*Interaction, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	list := x.byKey[key]
	if len(list) == 0 {
		return nil, false
	}
	i := x.next[key]
	if i < len(list)-1 {
		x.next[key] = i + 1
	}
	return list[i].in, true
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
// It scans every recording: a miss is the rare, slow path.
func (x *Index) Nearest(parts []Part) Miss {
	x.mu.Lock()
	defer x.mu.Unlock()
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
	return best
}
