package sanitize

import "strings"

// Character classes for the one pass over a document.
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

// docScan is what one pass over a raw document finds: the learned values,
// the places the detectors must look at, and the Slack id candidates.
type docScan struct {
	learned []match
	trig    map[int][]int // trigger -> positions
	at      []int         // each @ (emails)
	pipe    []int         // each | (labels of Slack markup)
	phone   [][2]int      // runs of digits shaped like phone numbers
	ip      [][2]int      // runs shaped like IPv4 addresses
	ids     [][2]int      // Slack id candidates
}

// scan makes the one pass over doc: the needles, and beside them the
// shapes that no needle can hold.
func (m *matcher) scan(doc string) *docScan {
	r := &docScan{trig: map[int][]int{}}
	trig := func(t, pos int) { r.trig[t] = append(r.trig[t], pos) }
	var (
		t                     uint32
		idStart               = -1 // -1: no run; -2: a run that cannot be an id
		idDigit, prevWord     bool
		phoneStart, ipStart   int
		phoneDigits, ipDigits int
		ipDots, phoneGroup    int
		phonePlus, phoneLong  bool
		inPhone, inIP         bool
	)
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		t = (t<<8 | uint32(fold[c])) & 0xFFFFFF
		if m.hasBi && i >= 1 {
			if b := t & 0xFFFF; m.bi[b>>6]&(1<<(b&63)) != 0 {
				r.learned = m.at(doc, i-1, m.byBi[b], r.learned, trig)
			}
		}
		if i >= 2 {
			if h := triHash(t); m.tri[h>>6]&(1<<(h&63)) != 0 {
				r.learned = m.at(doc, i-2, m.byTri[t], r.learned, trig)
			}
		}
		k := charClass[c]
		if k == cWord && idStart == -1 && !inPhone && !inIP {
			// Lower-case letters and the like, outside any run: most of a
			// text, and nothing to track.
			prevWord = true
			continue
		}
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
				r.id(doc, idStart, i, idDigit)
			}
			idStart = -1
		}
		prevWord = k&cWord != 0
		// A phone number has 9 digits or more, in groups of at most 4, or
		// all together after a +; a Slack ts (1790000001.000100) is not one.
		if k&cPhone != 0 {
			if !inPhone {
				phoneStart, inPhone = i, true
			}
			switch {
			case k&cDigit != 0:
				phoneDigits++
				if phoneGroup++; phoneGroup > 4 {
					phoneLong = true
				}
			case c == '+' && phoneDigits == 0:
				phonePlus = true
			default:
				phoneGroup = 0
			}
		} else {
			if phoneDigits >= 9 && (phonePlus || !phoneLong) {
				r.phone = append(r.phone, [2]int{phoneStart, i})
			}
			phoneDigits, phoneGroup, phonePlus, phoneLong, inPhone = 0, 0, false, false, false
		}
		if k&cIP != 0 {
			if !inIP {
				ipStart, inIP = i, true
			}
			if c == '.' {
				ipDots++
			} else {
				ipDigits++
			}
		} else {
			if ipDots >= 3 && ipDigits >= 4 {
				r.ip = append(r.ip, [2]int{ipStart, i})
			}
			ipDots, ipDigits, inIP = 0, 0, false
		}
		switch c {
		case '@':
			r.at = append(r.at, i)
		case '|':
			r.pipe = append(r.pipe, i)
		}
	}
	if idStart >= 0 {
		r.id(doc, idStart, len(doc), idDigit)
	}
	if phoneDigits >= 9 && (phonePlus || !phoneLong) {
		r.phone = append(r.phone, [2]int{phoneStart, len(doc)})
	}
	if ipDots >= 3 && ipDigits >= 4 {
		r.ip = append(r.ip, [2]int{ipStart, len(doc)})
	}
	r.learned = leftmostLongest(r.learned)
	return r
}

// id keeps a run of capitals and digits that is shaped like a Slack id: a
// whole word of 9 to 12 characters with a digit, or after @, # or ^ (a
// mention) any of 3 or more.
func (r *docScan) id(s string, start, end int, digit bool) {
	n := end - start
	mention := start > 0 && strings.IndexByte("@#^", s[start-1]) >= 0
	if (mention && n >= 3 || digit && n >= 9 && n <= 12) && wordBoundaryAfter(s, end) {
		r.ids = append(r.ids, [2]int{start, end})
	}
}
