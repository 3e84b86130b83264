package sanitize

import "slices"

// matcher finds a set of needles in text. It keeps a bit for the hash of
// each needle's first three bytes (letters folded to lower case), small
// enough to stay in the processor's cache: most positions of a text are
// ruled out by one lookup that does not depend on the last, and only where
// the bit is set are the needles with that beginning compared. Needles of
// two bytes get a table of their own.
//
// Needles with wordBounds match only as whole words (see wordAt).
type matcher struct {
	tri     [1 << (triBits - 6)]uint64
	bi      [1 << 10]uint64
	byTri   map[uint32]*bucket
	byBi    map[uint32]*bucket
	needles []needle
	hasBi   bool
}

// bucket holds the needles with one beginning: those of 8 bytes or more by
// their length and a hash of their folded bytes, so that many needles with
// a common beginning, such as ids and UUIDs, cost one lookup per length,
// not one comparison each.
type bucket struct {
	short []int32
	long  []byLength
}

type byLength struct {
	n      int
	byHash map[uint64][]int32
}

func (b *bucket) add(id int32, n *needle) {
	if len(n.text) < 8 {
		b.short = append(b.short, id)
		return
	}
	i := slices.IndexFunc(b.long, func(l byLength) bool { return l.n == len(n.text) })
	if i < 0 {
		// Kept in increasing order of length, for at.
		i, _ = slices.BinarySearchFunc(b.long, len(n.text), func(l byLength, n int) int { return l.n - n })
		b.long = slices.Insert(b.long, i, byLength{len(n.text), map[uint64][]int32{}})
	}
	h := foldHash(n.text)
	b.long[i].byHash[h] = append(b.long[i].byHash[h], id)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// foldHash is FNV-1a over the folded bytes of s.
func foldHash(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(fold[s[i]])) * fnvPrime
	}
	return h
}

const triBits = 18

type needle struct {
	text       string // as it stands in the text
	foldCase   bool   // match ASCII letters in any case
	payload    int    // caller's index
	wordBounds bool
}

// match is one occurrence of a needle.
type match struct {
	start, end int
	payload    int
}

var fold = func() (t [256]byte) {
	for c := range t {
		t[c] = lower(byte(c))
	}
	return t
}()

func triHash(t uint32) uint32 { return (t * 0x9E3779B1) >> (32 - triBits) }

func newMatcher(needles []needle) *matcher {
	m := &matcher{needles: needles, byTri: map[uint32]*bucket{}, byBi: map[uint32]*bucket{}}
	get := func(index map[uint32]*bucket, t uint32) *bucket {
		b := index[t]
		if b == nil {
			b = &bucket{}
			index[t] = b
		}
		return b
	}
	for i := range needles {
		n := &needles[i]
		switch {
		case len(n.text) >= 3:
			t := uint32(fold[n.text[0]])<<16 | uint32(fold[n.text[1]])<<8 | uint32(fold[n.text[2]])
			h := triHash(t)
			m.tri[h>>6] |= 1 << (h & 63)
			get(m.byTri, t).add(int32(i), n)
		case len(n.text) == 2:
			t := uint32(fold[n.text[0]])<<8 | uint32(fold[n.text[1]])
			m.bi[t>>6] |= 1 << (t & 63)
			get(m.byBi, t).add(int32(i), n)
			m.hasBi = true
		}
	}
	// Longest first, so the first needle that matches at a place is the
	// one to keep.
	longest := func(a, b int32) int { return len(needles[b].text) - len(needles[a].text) }
	for _, index := range []map[uint32]*bucket{m.byTri, m.byBi} {
		for _, b := range index {
			slices.SortFunc(b.short, longest)
		}
	}
	return m
}

func (n *needle) equal(s string) bool {
	if !n.foldCase {
		return s == n.text
	}
	for i := 0; i < len(s); i++ {
		if fold[s[i]] != fold[n.text[i]] {
			return false
		}
	}
	return true
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// at checks the needles of the bucket for a beginning at start, and
// reports the longest that stands there.
func (m *matcher) at(s string, start int, b *bucket, found []match, pass int) []match {
	if b == nil {
		return found
	}
	// The lengths are in increasing order: one hash, extended from one
	// length to the next, serves them all.
	h, hashed := uint64(fnvOffset), start
	for _, l := range b.long {
		end := start + l.n
		if end > len(s) {
			break
		}
		for ; hashed < end; hashed++ {
			h = (h ^ uint64(fold[s[hashed]])) * fnvPrime
		}
		if ids := l.byHash[h]; ids != nil {
			found = m.check(s, start, ids, found, pass)
		}
	}
	return m.check(s, start, b.short, found, pass)
}

func (m *matcher) check(s string, start int, ids []int32, found []match, pass int) []match {
	matched := false
	for _, id := range ids {
		n := &m.needles[id]
		if pass == foldedOnly && !n.foldCase || pass == verbatimOnly && n.foldCase {
			continue
		}
		end := start + len(n.text)
		if end > len(s) || !n.equal(s[start:end]) {
			continue
		}
		if !matched && (!n.wordBounds || wordAt(s, start, end)) {
			found = append(found, match{start, end, n.payload})
			matched = true
		}
	}
	return found
}

// Which needles a pass of find looks for.
const (
	allNeedles   = iota
	foldedOnly   // those that match in any case: for folded text
	verbatimOnly // those that match only as written: for the original of a folded text
)

// find returns the occurrences in s of the needles that pass asks for,
// leftmost first and longest where several start at one place, never
// overlapping.
func (m *matcher) find(s string, pass int) []match {
	var found []match
	if m.hasBi {
		// Needles of two bytes: parts of names, few and rare.
		for i := 1; i < len(s); i++ {
			b := uint32(fold[s[i-1]])<<8 | uint32(fold[s[i]])
			if m.bi[(b>>6)&uint32(len(m.bi)-1)]&(1<<(b&63)) != 0 {
				found = m.at(s, i-1, m.byBi[b], found, pass)
			}
		}
	}
	if len(s) < 3 {
		return leftmostLongest(found)
	}
	t := uint32(fold[s[0]])<<8 | uint32(fold[s[1]])
	for i := 2; i < len(s); i++ {
		t = (t<<8 | uint32(fold[s[i]])) & 0xFFFFFF
		h := triHash(t)
		if m.tri[(h>>6)&uint32(len(m.tri)-1)]&(1<<(h&63)) != 0 {
			found = m.at(s, i-2, m.byTri[t], found, pass)
		}
	}
	return leftmostLongest(found)
}

func leftmostLongest(found []match) []match {
	if len(found) < 2 {
		return found
	}
	slices.SortStableFunc(found, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	kept := found[:1]
	for _, f := range found[1:] {
		if f.start >= kept[len(kept)-1].end {
			kept = append(kept, f)
		}
	}
	return kept
}
