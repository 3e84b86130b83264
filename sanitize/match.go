package sanitize

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// matcher finds every occurrence of a set of needles in one pass over the
// text (Aho-Corasick), ASCII-case-insensitively or exactly per needle.
// Ordinary needles match only as whole words (the characters on either
// side are not letters or digits) and are reported; trigger needles match
// anywhere and only set a bit, to tell which detectors a text needs.
type matcher struct {
	class   [256]uint8 // byte -> input class; letters fold to lower case
	classes int
	// next maps row+class to the next state's row, shifted left by one;
	// the low bit says the state has needles ending in it. A row is a
	// state's offset in next: state * classes.
	next    []int32
	out     [][]int32 // state -> needles ending here, longest first
	needles []needle
}

type needle struct {
	text       string // as given
	foldCase   bool   // match ASCII letters in any case
	payload    int    // caller's index; for a trigger, its bit number
	wordBounds bool
	trigger    bool
}

// match is one occurrence of a needle.
type match struct {
	start, end int
	payload    int
}

func newMatcher(needles []needle) *matcher {
	m := &matcher{needles: needles}
	// Input classes: one per distinct (folded) byte used by a needle, and
	// class 0 for everything else. Past 255 classes, further bytes share
	// class 0: the automaton then over-reports, and every match is checked
	// against its needle again.
	for _, n := range needles {
		for i := 0; i < len(n.text); i++ {
			if b := lower(n.text[i]); m.class[b] == 0 && m.classes < 255 {
				m.classes++
				m.class[b] = uint8(m.classes)
			}
		}
	}
	m.classes++
	for b := 'A'; b <= 'Z'; b++ {
		m.class[b] = m.class[b+'a'-'A']
	}
	// The trie, with plain state numbers for now.
	trie := make([]int32, m.classes)
	m.out = [][]int32{nil}
	for i, n := range needles {
		s := int32(0)
		for j := 0; j < len(n.text); j++ {
			c := int(m.class[lower(n.text[j])])
			t := trie[int(s)*m.classes+c]
			if t == 0 {
				t = int32(len(m.out))
				m.out = append(m.out, nil)
				trie = append(trie, make([]int32, m.classes)...)
				trie[int(s)*m.classes+c] = t
			}
			s = t
		}
		m.out[s] = append(m.out[s], int32(i))
	}
	// Breadth-first: failure links, folded into the transitions so that a
	// search is one lookup per byte.
	fail := make([]int32, len(m.out))
	var queue []int32
	for c := 0; c < m.classes; c++ {
		if t := trie[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(m.out[s], m.out[fail[s]]...)
		for c := 0; c < m.classes; c++ {
			i := int(s)*m.classes + c
			if t := trie[i]; t != 0 {
				fail[t] = trie[int(fail[s])*m.classes+c]
				queue = append(queue, t)
			} else {
				trie[i] = trie[int(fail[s])*m.classes+c]
			}
		}
	}
	m.next = make([]int32, len(trie))
	for i, t := range trie {
		v := t * int32(m.classes) << 1
		if len(m.out[t]) > 0 {
			v |= 1
		}
		m.next[i] = v
	}
	for s := range m.out {
		slices.SortFunc(m.out[s], func(a, b int32) int { return len(needles[b].text) - len(needles[a].text) })
	}
	return m
}

func (n *needle) equal(s string) bool {
	if !n.foldCase {
		return s == n.text
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != lower(n.text[i]) {
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

// hit handles the needles of the state reached at the byte before end:
// triggers set their bits, and word needles that stand as words are added
// to found.
func (m *matcher) hit(s string, end int, row int32, found []match, triggers *uint64, bounded func(string, int, int) bool) []match {
	for _, id := range m.out[int(row)/m.classes] {
		n := &m.needles[id]
		start := end - len(n.text)
		if !n.equal(s[start:end]) {
			continue
		}
		if n.trigger {
			*triggers |= 1 << n.payload
			continue
		}
		if n.wordBounds && !bounded(s, start, end) {
			continue
		}
		found = append(found, match{start, end, n.payload})
	}
	return found
}

// find returns the whole-word occurrences in s, leftmost first, the longest
// where several start at one place, never overlapping, and the bits of the
// triggers in s. bounded decides what a whole word is.
func (m *matcher) find(s string, bounded func(string, int, int) bool) ([]match, uint64) {
	if m == nil || len(m.needles) == 0 {
		return nil, 0
	}
	var (
		found    []match
		triggers uint64
		row      int32
	)
	for i := 0; i < len(s); i++ {
		v := m.next[row+int32(m.class[s[i]])]
		row = v >> 1
		if v&1 != 0 {
			found = m.hit(s, i+1, row, found, &triggers, bounded)
		}
	}
	return leftmostLongest(found), triggers
}

func leftmostLongest(found []match) []match {
	if len(found) < 2 {
		return found
	}
	slices.SortFunc(found, func(a, b match) int {
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

// wordBounds reports whether s[start:end] stands as a word in text.
func wordBounds(s string, start, end int) bool {
	return wordBoundaryBefore(s, start) && wordBoundaryAfter(s, end)
}

// rawWordBounds is wordBounds for the raw bytes of a JSON document, where
// an escape such as \n before a word ends the word before it.
func rawWordBounds(s string, start, end int) bool {
	before := wordBoundaryBefore(s, start) ||
		start >= 2 && s[start-2] == '\\' && (s[start-1] == 'n' || s[start-1] == 't' || s[start-1] == 'r' || s[start-1] == 'b' || s[start-1] == 'f')
	return before && wordBoundaryAfter(s, end)
}

func wordBoundaryBefore(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(r)
}

func wordBoundaryAfter(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(r)
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}
