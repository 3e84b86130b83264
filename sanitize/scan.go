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
	cStart    // where shapes start: digits, capitals, + ( @ |
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
	for _, c := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ+(@|" {
		t[c] |= cStart
	}
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

// scan finds in a raw document the learned values and the triggers (one
// pass of the matcher), then the shapes no needle can hold (one pass that
// jumps from one digit, capital, @ or | to the next).
func (m *matcher) scan(doc string) *docScan {
	r := &docScan{trig: map[int][]int{}}
	r.learned = m.find(doc, func(t, pos int) { r.trig[t] = append(r.trig[t], pos) })
	r.shapes(doc)
	return r
}

func (r *docScan) shapes(doc string) {
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		k := charClass[c]
		if k&cStart == 0 {
			continue
		}
		switch {
		case c == '@':
			r.at = append(r.at, i)
		case c == '|':
			r.pipe = append(r.pipe, i)
		case k&cUpper != 0:
			j, digit := i+1, false
			for j < len(doc) && charClass[doc[j]]&(cUpper|cDigit) != 0 {
				digit = digit || isDigit(doc[j])
				j++
			}
			if k&cIDPrefix != 0 && (i == 0 || charClass[doc[i-1]]&cWord == 0) {
				r.id(doc, i, j, digit)
			}
			i = j - 1
		default:
			i = r.numbers(doc, i) - 1
		}
	}
}

// numbers reads the run of digits and separators that starts at doc[i]
// and keeps what may be a phone number (9 digits or more, in groups of at
// most 4, or all together after a +: a Slack ts such as 1790000001.000100
// is not one) or an IPv4 address (4 numbers and 3 dots). It returns where
// the run ends.
func (r *docScan) numbers(doc string, i int) int {
	start, plus := i, doc[i] == '+'
	digits, group, long := 0, 0, false
	ipStart, ipDots, ipDigits := i, 0, 0
	j := i
	for ; j < len(doc); j++ {
		c := doc[j]
		k := charClass[c]
		if k&cPhone == 0 {
			break
		}
		if k&cDigit != 0 {
			digits++
			if group++; group > 4 {
				long = true
			}
		} else {
			group = 0
		}
		if k&cIP != 0 {
			if c == '.' {
				ipDots++
			} else {
				ipDigits++
			}
			continue
		}
		if ipDots >= 3 && ipDigits >= 4 {
			r.ip = append(r.ip, [2]int{ipStart, j})
		}
		ipStart, ipDots, ipDigits = j+1, 0, 0
	}
	if ipDots >= 3 && ipDigits >= 4 {
		r.ip = append(r.ip, [2]int{ipStart, j})
	}
	if digits >= 9 && (plus || !long) {
		r.phone = append(r.phone, [2]int{start, j})
	}
	return max(j, i+1)
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
