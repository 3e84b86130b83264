package leakcheck

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/sanitize/words"
	"github.com/brianvoe/gofakeit/v7/data"
	"golang.org/x/text/unicode/norm"
)

// The leak check looks for names of people that nobody taught it, with a
// rule of its own that is narrower than the rewrite's detector, so that
// every name it finds is one the rewrite replaces (the rewrite takes every
// capitalised pair whose first word is a given name and whose second is a
// surname or no lower-case English word, and every capitalised pair of
// Cyrillic or Greek words):
//
//   - two Title-case words (a capital, then lower case) with one space
//     between, the first in the given-name list and the second in the
//     surname list (words/given.txt.gz, words/surnames.txt.gz, NFC);
//   - in Cyrillic or Greek, two Title-case words of that script whose
//     first is a given name, or one with an ending of at most two letters
//     changed after a stem of three or more (Ивана, Ивану for Иван);
//
// except a pair whose two words are both in gofakeit's first- and
// last-name lists, where the fakes come from, and a pair inside a phrase
// of Rules.NotNames (in any letter case).

// leakNameLists are the word lists the leak check's name rule reads.
type leakNameLists struct {
	given, surnames words.Set
	stems           map[string]struct{} // Cyrillic and Greek given names, and their stems
	fakes           map[string]struct{} // gofakeit's first and last names
}

var leakNames = sync.OnceValue(func() *leakNameLists {
	l := &leakNameLists{given: words.Given(), surnames: words.Surnames(),
		stems: map[string]struct{}{}, fakes: map[string]struct{}{}}
	for g := range l.given {
		r, _ := utf8.DecodeRuneInString(g)
		if !unicode.In(r, unicode.Cyrillic, unicode.Greek) {
			continue
		}
		runes := []rune(g)
		for cut := 0; cut <= 2 && len(runes)-cut >= 3; cut++ {
			l.stems[string(runes[:len(runes)-cut])] = struct{}{}
		}
	}
	for _, list := range []string{"first", "last"} {
		for _, n := range data.Person[list] {
			l.fakes[n] = struct{}{}
		}
	}
	return l
})

// inflectedGiven reports whether a Cyrillic or Greek word is a given name, or one
// inflected: a stem of three letters or more that a given name has too,
// with at most two letters after it in each.
func (l *leakNameLists) inflectedGiven(w string) bool {
	if _, ok := l.given[w]; ok {
		return true
	}
	runes := []rune(w)
	for cut := 0; cut <= 2 && len(runes)-cut >= 3; cut++ {
		if _, ok := l.stems[string(runes[:len(runes)-cut])]; ok {
			return true
		}
	}
	return false
}

// titleWord is a word of letters that starts with a capital and goes on
// in lower case.
type titleWord struct {
	start, end int
	script     *unicode.RangeTable // Cyrillic, Greek, or nil for others
	title      bool
}

// unlearnedNames returns the names the rule above finds in s, each as its
// two words; notNames are lower case, with single spaces.
func unlearnedNames(s string, notNames []string) []string {
	if !mayHoldName(s) {
		return nil
	}
	l := leakNames()
	var found []string
	var prev titleWord
	havePrev := false
	for i := 0; i < len(s); {
		w, next := nextTitleWord(s, i)
		if w.end == 0 {
			break
		}
		i = next
		if havePrev && prev.title && w.title && prev.end+1 == w.start && s[prev.end] == ' ' {
			first, second := nfc(s[prev.start:prev.end]), nfc(s[w.start:w.end])
			if nameRule(l, first, second, prev.script, w.script) && !notName(s, prev.start, w.end, notNames) {
				found = append(found, first+" "+second)
			}
		}
		prev, havePrev = w, true
	}
	return found
}

func nameRule(l *leakNameLists, first, second string, s1, s2 *unicode.RangeTable) bool {
	_, fake1 := l.fakes[first]
	_, fake2 := l.fakes[second]
	if fake1 && fake2 {
		return false
	}
	if _, ok := l.given[first]; ok {
		if _, ok := l.surnames[second]; ok {
			return true
		}
	}
	return s1 != nil && s1 == s2 && l.inflectedGiven(first)
}

// nextTitleWord returns the next run of letters (and the marks on them) from
// s[i:], and where to go on; end is 0 when there is none.
func nextTitleWord(s string, i int) (titleWord, int) {
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if isLetterRune(r) {
			break
		}
		i += n
	}
	if i >= len(s) {
		return titleWord{}, i
	}
	w := titleWord{start: i, title: true}
	first := true
	for i < len(s) {
		r, n := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		mark := r >= utf8.RuneSelf && unicode.Is(unicode.Mn, r)
		if !mark && !isLetterRune(r) {
			break
		}
		if !mark {
			switch {
			case first:
				w.title = r < utf8.RuneSelf && 'A' <= r && r <= 'Z' || r >= utf8.RuneSelf && (unicode.IsUpper(r) || unicode.IsTitle(r))
				switch {
				case r < utf8.RuneSelf:
				case unicode.Is(unicode.Cyrillic, r):
					w.script = unicode.Cyrillic
				case unicode.Is(unicode.Greek, r):
					w.script = unicode.Greek
				}
			case r < utf8.RuneSelf:
				w.title = w.title && 'a' <= r && r <= 'z'
			default:
				w.title = w.title && unicode.IsLower(r)
			}
			if !first && w.script != nil && !unicode.Is(w.script, r) {
				w.script = nil
			}
			first = false
		}
		i += n
	}
	w.end = i
	if w.title && utf8.RuneCountInString(s[w.start:w.end]) < 2 {
		w.title = false
	}
	return w, i
}

func isLetterRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func nfc(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return norm.NFC.String(s)
		}
	}
	return s
}

// mayHoldName reports whether s may hold two capitalised words with a
// space between: a capital after a space after a letter.
func mayHoldName(s string) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' && (isUpperASCII(s[i+1]) || s[i+1] >= utf8.RuneSelf) {
			return true
		}
	}
	return false
}

// notName reports whether s[start:end] lies inside a phrase of notNames,
// in any letter case, standing as whole words.
func notName(s string, start, end int, notNames []string) bool {
	if len(notNames) == 0 {
		return false
	}
	lower := strings.ToLower(s)
	if len(lower) != len(s) {
		return false // offsets moved: no allowance
	}
	for _, p := range notNames {
		for from := 0; ; {
			at := strings.Index(lower[from:], p)
			if at < 0 {
				break
			}
			at += from
			from = at + 1
			pEnd := at + len(p)
			alone := (at == 0 || !isLetterRuneBefore(lower, at)) && (pEnd == len(lower) || !isLetterRuneAt(lower, pEnd))
			if alone && at <= start && end <= pEnd {
				return true
			}
		}
	}
	return false
}

func isLetterRuneBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isLetterRune(r)
}

func isLetterRuneAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isLetterRune(r)
}
