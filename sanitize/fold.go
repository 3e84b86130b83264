package sanitize

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rewriter finds learned values in folded text: lower case, without
// diacritics, compatibility forms decomposed (NFKD), apostrophes of every
// kind as ', and the letters NFKD keeps whole (ø, ł, ß, ...) spelled as
// ASCII. So "José Núñez", "JOSE NUNEZ", "jose nunez" in NFD and "Jose
// Nunez" all fold to "jose nunez", and O’Connor to o'connor. The
// leak check (package leakcheck) has its own folding; they share no code.

// folded is a text folded for matching, with where each of its bytes came
// from in the original.
type folded struct {
	text string
	// at[i] is the offset in the original of the character folded byte i
	// belongs to; at[len(text)] is len(original). Nil when the text was
	// ASCII and folding left every offset where it was (the matcher folds
	// ASCII letter case itself).
	at []int32
}

// orig returns where folded byte i came from. For the end of a match,
// that is the start of the next character kept, so combining marks
// dropped after its last letter are part of it.
func (f *folded) orig(i int) int {
	if f.at == nil {
		return i
	}
	return int(f.at[i])
}

// asciiOnly reports whether s has no byte of 0x80 or more.
func asciiOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// foldText folds s. ASCII text is returned as it is.
func foldText(s string) folded {
	if asciiOnly(s) {
		return folded{text: s}
	}
	out := make([]byte, 0, len(s))
	at := make([]int32, 0, len(s)+1)
	var it norm.Iter
	it.InitString(norm.NFKD, s)
	for !it.Done() {
		pos := it.Pos()
		seg := it.Next()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			seg = seg[n:]
			before := len(out)
			out = appendFolded(out, r)
			for range len(out) - before {
				at = append(at, int32(pos))
			}
		}
	}
	at = append(at, int32(len(s)))
	return folded{text: string(out), at: at}
}

// appendFolded appends the folded form of one decomposed rune.
func appendFolded(out []byte, r rune) []byte {
	switch {
	case r < utf8.RuneSelf:
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return append(out, byte(r))
	case unicode.Is(unicode.Mn, r):
		return out // a combining mark: the diacritic of the letter before
	}
	if s, ok := foldSpecial[r]; ok {
		return append(out, s...)
	}
	return utf8.AppendRune(out, unicode.ToLower(r))
}

// foldSpecial spells the letters that NFKD does not decompose, and the
// other apostrophes, as the rewriter matches them.
var foldSpecial = map[rune]string{
	'ø': "o", 'Ø': "o", 'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d",
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'þ': "th", 'Þ': "th",
	'ı': "i", 'ħ': "h", 'Ħ': "h", 'ŧ': "t", 'Ŧ': "t", 'ς': "σ",
	'\u2019': "'", '\u2018': "'", '\u02bc': "'", '\u2032': "'", '\uff07': "'", '`': "'", '\u00b4': "'",
}

// script names the writing systems word boundaries care about: a change
// of script is a boundary ("Liamの", "وNadia").
type script uint8

const (
	scriptOther script = iota
	scriptLatin
	scriptGreek
	scriptCyrillic
	scriptArabic
	scriptHebrew
	scriptDevanagari
	scriptHangul
	scriptNoSpace // Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar: written without spaces
)

func scriptOf(r rune) script {
	switch {
	case r < utf8.RuneSelf:
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return scriptLatin
		}
		return scriptOther
	case unicode.Is(unicode.Latin, r):
		return scriptLatin
	case unicode.Is(unicode.Cyrillic, r):
		return scriptCyrillic
	case unicode.Is(unicode.Greek, r):
		return scriptGreek
	case unicode.Is(unicode.Arabic, r):
		return scriptArabic
	case unicode.Is(unicode.Hebrew, r):
		return scriptHebrew
	case unicode.Is(unicode.Devanagari, r):
		return scriptDevanagari
	case unicode.Is(unicode.Hangul, r):
		return scriptHangul
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar):
		return scriptNoSpace
	}
	return scriptOther
}

// noSpace reports whether r belongs to a script written without spaces
// between words, or one whose particles attach to names (Hangul): a name
// in it matches without word boundaries.
func noSpace(r rune) bool {
	s := scriptOf(r)
	return s == scriptNoSpace || s == scriptHangul
}

func isDigitRune(r rune) bool { return '0' <= r && r <= '9' }

// boundary reports whether the rune adj beside a match, whose rune at
// that edge is edge, separates it from the rest of the text: nothing,
// anything but a letter or digit, an underscore, a digit beside a letter,
// a letter of another script, or any rune next to a name in a script
// without spaces.
func boundary(adj, edge rune) bool {
	switch {
	case adj == utf8.RuneError || adj == '_':
		return true
	case noSpace(edge):
		return true
	case isDigitRune(adj):
		return !isDigitRune(edge)
	case unicode.IsLetter(adj) || unicode.Is(unicode.Mn, adj):
		if isDigitRune(edge) {
			return true
		}
		return scriptOf(adj) != scriptOf(edge)
	case unicode.IsDigit(adj):
		return !unicode.IsDigit(edge)
	}
	return true
}

// arabicProclitics are the one-letter words Arabic writes glued to the
// next word (and, so, with, for, like, the article's alif and lam): a name
// after them still stands as a word.
const arabicProclitics = "وفبلكا"

// wordAt reports whether s[start:end] stands as a word in s. A digit
// ends a word on one side ("nadia401", "401nadia"); a word in ASCII with
// digits on both sides ("9ada3", "U8BO4") or inside a run of eight
// hexadecimal digits or more (a hash, a UUID: "3f2ada9b") is part of an
// id.
func wordAt(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:])
	last, _ := utf8.DecodeLastRuneInString(s[:end])
	before, after := utf8.RuneError, utf8.RuneError
	if start > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:start])
	}
	if end < len(s) {
		after, _ = utf8.DecodeRuneInString(s[end:])
	}
	if !boundary(after, last) {
		return false
	}
	// Ids are written in ASCII: the rule is for names in it.
	if (isDigitRune(before) || isDigitRune(after)) && first < utf8.RuneSelf && last < utf8.RuneSelf {
		if isDigitRune(before) && isDigitRune(after) && !isDigitRune(first) && !isDigitRune(last) || inHexRun(s, start, end) {
			return false
		}
	}
	if boundary(before, first) {
		return true
	}
	if scriptOf(first) != scriptArabic {
		return false
	}
	// Up to two proclitics, then a boundary.
	i := start
	for n := 0; n < 2 && i > 0; n++ {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !containsRune(arabicProclitics, r) {
			return false
		}
		i -= size
		if i == 0 {
			return true
		}
		prev, _ := utf8.DecodeLastRuneInString(s[:i])
		if boundary(prev, r) {
			return true
		}
	}
	return false
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}

// inHexRun reports whether s[start:end] lies in a run of eight or more
// hexadecimal digits and dashes that holds a decimal digit.
func inHexRun(s string, start, end int) bool {
	isHex := func(c byte) bool {
		return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '-'
	}
	for i := start; i < end; i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	lo, hi := start, end
	for lo > 0 && isHex(s[lo-1]) {
		lo--
	}
	for hi < len(s) && isHex(s[hi]) {
		hi++
	}
	if hi-lo < 8 {
		return false
	}
	for i := lo; i < hi; i++ {
		if '0' <= s[i] && s[i] <= '9' {
			return true
		}
	}
	return false
}
