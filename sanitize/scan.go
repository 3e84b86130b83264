package sanitize

import "strings"

// Character classes for the one pass over a string.
const (
	cDigit    = 1 << iota
	cUpper    // A-Z
	cIDPrefix // the letters Slack ids start with
	cWord     // letters, digits, _ and every byte of a non-ASCII character
	cPhone    // what phone numbers are written with
	cIP       // what IPv4 addresses are written with
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		switch {
		case isDigit(b):
			t[c] = cDigit | cWord | cPhone | cIP
		case isUpper(b):
			t[c] = cUpper | cWord
			if strings.IndexByte(slackIDPrefixes, b) >= 0 {
				t[c] |= cIDPrefix
			}
		case 'a' <= b && b <= 'z', b == '_', b >= 0x80:
			t[c] = cWord
		case strings.IndexByte(" .-()+", b) >= 0:
			t[c] = cPhone
		}
	}
	t['.'] |= cIP
	return t
}()

// textScan is what one pass over a string finds: the learned values in it,
// the triggers of the detectors it needs, and the Slack id candidates.
type textScan struct {
	learned   []match
	triggers  uint64
	at, pipe  bool // an @ (emails), a | (Slack markup labels)
	phone, ip bool // a run of digits shaped like a phone number, an IPv4 address
	ids       [][2]int
}

// scan makes the one pass: the automaton, and beside it the shapes that no
// automaton can hold.
func (m *matcher) scan(s string, r *textScan) {
	*r = textScan{learned: r.learned[:0], ids: r.ids[:0]}
	var (
		row                   int32
		idStart               = -1 // -1: no run; -2: a run that cannot be an id
		idDigit, prevWord     bool
		phoneDigits, ipDigits int
		ipDots, phoneGroup    int
		phonePlus, phoneLong  bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		v := m.next[row+int32(m.class[c])]
		row = v >> 1
		if v&1 != 0 {
			r.learned = m.hit(s, i+1, row, r.learned, &r.triggers, wordBounds)
		}
		k := charClass[c]
		if k&(cUpper|cDigit) != 0 {
			switch {
			case idStart == -1 && k&cIDPrefix != 0 && !prevWord:
				idStart, idDigit = i, false
			case idStart == -1:
				idStart = -2
			case k&cDigit != 0:
				idDigit = true
			}
		} else {
			if idStart >= 0 {
				r.id(s, idStart, i, idDigit)
			}
			idStart = -1
		}
		prevWord = k&cWord != 0
		// A phone number has 9 digits or more, in groups of at most 4, or
		// all together after a +; a Slack ts (1790000001.000100) is not one.
		if k&cPhone != 0 {
			switch {
			case k&cDigit != 0:
				phoneDigits++
				if phoneGroup++; phoneGroup > 4 {
					phoneLong = true
				}
				if phoneDigits >= 9 && (phonePlus || !phoneLong) {
					r.phone = true
				}
			case c == '+' && phoneDigits == 0:
				phonePlus = true
			default:
				phoneGroup = 0
			}
		} else {
			phoneDigits, phoneGroup, phonePlus, phoneLong = 0, 0, false, false
		}
		if k&cIP != 0 {
			if c == '.' {
				ipDots++
			} else {
				ipDigits++
			}
			if ipDots >= 3 && ipDigits >= 4 {
				r.ip = true
			}
		} else {
			ipDots, ipDigits = 0, 0
		}
		switch c {
		case '@':
			r.at = true
		case '|':
			r.pipe = true
		}
	}
	if idStart >= 0 {
		r.id(s, idStart, len(s), idDigit)
	}
	r.learned = leftmostLongest(r.learned)
}

// id keeps a run of capitals and digits that is shaped like a Slack id: a
// whole word of 9 to 12 characters with a digit, or after @, # or ^ (a
// mention) any of 3 or more.
func (r *textScan) id(s string, start, end int, digit bool) {
	n := end - start
	mention := start > 0 && strings.IndexByte("@#^", s[start-1]) >= 0
	if (mention && n >= 3 || digit && n >= 9 && n <= 12) && wordBoundaryAfter(s, end) {
		r.ids = append(r.ids, [2]int{start, end})
	}
}
