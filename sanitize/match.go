package sanitize

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// matcher finds every occurrence of a set of needles in one pass over the
// text (Aho-Corasick), ASCII-case-insensitively or exactly per needle, and
// only where a needle stands as a whole word: the characters on either side
// are not letters or digits.
type matcher struct {
	class   [256]uint8 // byte -> input class; letters fold to lower case
	classes int
	next    []int32   // state*classes + class -> state
	out     [][]int32 // state -> needles ending here (longest first)
	needles []needle
}

type needle struct {
	text       string // as given
	foldCase   bool   // match ASCII letters in any case
	payload    int    // caller's index
	wordBounds bool
}

// match is one occurrence of a needle.
type match struct {
	start, end int
	payload    int
}

func newMatcher(needles []needle) *matcher {
	m := &matcher{needles: needles}
	// Input classes: one per distinct (folded) byte used by a needle, and
	// class 0 for everything else.
	for _, n := range needles {
		for i := 0; i < len(n.text); i++ {
			// Past 255 classes, further bytes share class 0: the automaton
			// then over-reports, and find checks every match again.
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
	// The trie works on folded bytes; exact needles are checked again on
	// each match, which keeps one automaton for both kinds.
	m.next = make([]int32, m.classes)
	m.out = [][]int32{nil}
	goTo := func(s int32, c uint8) int32 { return m.next[int(s)*m.classes+int(c)] }
	for i, n := range needles {
		s := int32(0)
		for j := 0; j < len(n.text); j++ {
			c := m.class[lower(n.text[j])]
			t := goTo(s, c)
			if t == 0 {
				t = int32(len(m.out))
				m.out = append(m.out, nil)
				m.next = append(m.next, make([]int32, m.classes)...)
				m.next[int(s)*m.classes+int(c)] = t
			}
			s = t
		}
		m.out[s] = append(m.out[s], int32(i))
	}
	// Breadth-first: failure links, folded into the transition table so
	// that a search is one lookup per byte.
	fail := make([]int32, len(m.out))
	queue := []int32{}
	for c := 0; c < m.classes; c++ {
		if t := m.next[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		m.out[s] = append(m.out[s], m.out[fail[s]]...)
		for c := 0; c < m.classes; c++ {
			i := int(s)*m.classes + c
			if t := m.next[i]; t != 0 {
				fail[t] = m.next[int(fail[s])*m.classes+c]
				queue = append(queue, t)
			} else {
				m.next[i] = m.next[int(fail[s])*m.classes+c]
			}
		}
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

// find returns the whole-word occurrences in s, leftmost first, the longest
// where several start at one place, never overlapping.
func (m *matcher) find(s string) []match {
	if m == nil || len(m.needles) == 0 {
		return nil
	}
	var found []match
	state := int32(0)
	for i := 0; i < len(s); i++ {
		state = m.next[int(state)*m.classes+int(m.class[s[i]])]
		for _, id := range m.out[state] {
			n := &m.needles[id]
			start := i + 1 - len(n.text)
			if !n.equal(s[start : i+1]) {
				continue
			}
			if n.wordBounds && !(wordBoundaryBefore(s, start) && wordBoundaryAfter(s, i+1)) {
				continue
			}
			found = append(found, match{start, i + 1, n.payload})
		}
	}
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
