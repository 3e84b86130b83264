package sanitize

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/sanitize/words"
)

// The name detector finds people named in free text who are in no known
// field, no people file and no names list ("ask Tunde Bakare about the
// budget"), and the names in email addresses (corin.abbot@corp.io), in the
// learning pass, before any document is written: a name found once is
// then replaced wherever it stands, in every file of the run, by the
// dictionary's matcher, and the leak check hunts it as any learned value.
//
// It is deterministic, and reads word lists rather than a model: two
// adjacent words in title case are a name when the first is a given name
// of some locale and the second a surname, or no English word while the
// first is none either ("Imogen Hale", "Oskar Lindqvist"); when neither
// is an English word and one is a listed name ("Tunde Bakare"); after a
// word that strongly introduces a person (ask, cc, thanks), when the
// first is a given name ("cc Imogen Hale"); after any introducing word
// (with, from too), when the first is no English word and the second a
// surname or no English word either ("ask Bartholomew Quennell"); and
// when neither is an English word and a word such as "will" or "said"
// follows ("Priyanka Deshmukh will"). In
// Cyrillic and Greek, where only names and a sentence's first word take a
// capital, two title-case words are a name when the first is a listed
// given name or the second a listed surname, in any case ending of up to
// two letters (Ивану Петрову, Νίκο Αλεξίου).

// nameLists are the given names and surnames of every locale of
// @faker-js/faker in a script with letter case (see words/README.md).
type nameLists struct {
	given, surnames words.Set
	// stems are the names of scripts with case endings (Cyrillic,
	// Greek) and each without its last one or two letters, of three
	// letters or more.
	stems  map[string]stemOf
	digest string // of the lists, for the rules digest
}

// stemOf says which lists a stem is of.
type stemOf uint8

const (
	givenStem stemOf = 1 << iota
	surnameStem
)

var names = sync.OnceValue(func() *nameLists {
	l := &nameLists{given: words.Given(), surnames: words.Surnames(), stems: map[string]stemOf{}, digest: words.Digest()}
	for list, set := range map[stemOf]words.Set{givenStem: l.given, surnameStem: l.surnames} {
		for w := range set {
			if r, _ := utf8.DecodeRuneInString(w); scriptOf(r) != scriptCyrillic && scriptOf(r) != scriptGreek {
				continue
			}
			for cut := 0; cut <= 2 && utf8.RuneCountInString(w) >= 3; cut++ {
				l.stems[w] |= list
				_, n := utf8.DecodeLastRuneInString(w)
				w = w[:len(w)-n]
			}
		}
	}
	return l
})

func isGiven(w string) bool   { _, ok := names().given[w]; return ok }
func isSurname(w string) bool { _, ok := names().surnames[w]; return ok }

// introducers are words after which a capitalised pair is a person more
// often than not: strongly (ask, cc, dear), or weakly (with, from), where
// a product's name stands as often ("with Claude Opus").
var introducers = map[string]introducer{
	"ask": strong, "asked": strong, "cc": strong, "thanks": strong, "thank": strong, "hi": strong, "hey": strong,
	"hello": strong, "dear": strong, "ping": strong, "pinged": strong, "tell": strong, "told": strong,
	"email": strong, "emailed": strong, "call": strong, "called": strong, "meet": strong, "met": strong,
	"invite": strong, "invited": strong, "contact": strong, "attn": strong, "mr": strong, "mrs": strong,
	"ms": strong, "dr": strong, "prof": strong, "assignee": strong, "reviewer": strong, "colleague": strong,
	"candidate": strong, "cv": strong, "resume": strong,
	"with": weak, "from": weak, "to": weak, "by": weak, "per": weak, "via": weak, "and": weak, "or": weak,
	"for": weak, "owner": weak, "manager": weak, "author": weak,
}

type introducer uint8

const (
	none introducer = iota
	weak
	strong
)

// nameWord is one word of a text that may be part of a name.
type nameWord struct {
	start, end int    // in the text, possessive included
	word       string // without a possessive 's
	script     script
	title      bool // starts with a capital, then lower case (O'Brien, McKay, Anne-Marie allowed)
}

// detectNames calls found with each name the detector finds in text.
func detectNames(text string, notNames []string, found func(name string)) {
	if !hasTitleWord(text) {
		return
	}
	var lower string // text in lower case, for notNames, made once
	var prev nameWord
	havePrev := false
	context := none // how the word before prev introduces a person
	for i := 0; i < len(text); {
		w, next, ok := nextWord(text, i)
		if !ok {
			break
		}
		adjacent := havePrev && prev.end <= w.start && isPairGap(text[prev.end:w.start])
		if adjacent && prev.title && w.title && prev.script == w.script && (isName(prev, w, context) || actsAfter(prev, w, text, next)) {
			name := prev.word + " " + w.word
			if len(notNames) > 0 {
				if lower == "" {
					lower = strings.ToLower(text)
				}
				if !coveredBy(lower, prev.start, w.start+len(w.word), notNames) {
					found(name)
				}
			} else {
				found(name)
			}
		}
		context = none
		if havePrev {
			context = introducers[strings.ToLower(prev.word)]
		}
		prev, havePrev = w, true
		i = next
	}
}

// actors are words after which two capitalised words that no dictionary
// holds are a person who does something ("Priyanka Deshmukh will
// update the client").
var actors = map[string]bool{
	"will": true, "would": true, "said": true, "says": true, "wrote": true, "writes": true, "asked": true,
	"asks": true, "owns": true, "owned": true, "thinks": true, "thought": true, "agreed": true, "suggested": true,
	"mentioned": true, "joined": true, "approved": true, "reviewed": true, "replied": true, "who": true,
	"leads": true, "led": true, "confirmed": true, "signed": true,
}

// actsAfter reports whether a and b, Latin words in no dictionary, are
// followed by a word of actors.
func actsAfter(a, b nameWord, text string, next int) bool {
	if a.script != scriptLatin || englishWord(strings.ToLower(a.word)) || englishWord(strings.ToLower(b.word)) {
		return false
	}
	after, _, ok := nextWord(text, next)
	return ok && isPairGap(text[b.end:after.start]) && actors[after.word]
}

// isPairGap reports whether what stands between two words lets them be
// one name: a single space or no-break space, or an underscore, as in a
// file name (Oskar_Lindqvist_notes.txt).
func isPairGap(gap string) bool {
	return gap == " " || gap == "\u00a0" || gap == "_"
}

// isName decides a pair of adjacent title-case words of one script.
func isName(a, b nameWord, context introducer) bool {
	if a.script == scriptLatin {
		eb := englishWord(strings.ToLower(b.word))
		switch {
		case isGiven(a.word) && (isSurname(b.word) || !eb && !englishWord(strings.ToLower(a.word))):
			// A given name that is also a word ("An Eval", "Will Do")
			// needs a surname after it.
			return true
		case !englishWord(strings.ToLower(a.word)) && !eb && (isGiven(b.word) || isSurname(b.word)):
			return true
		case context == strong && isGiven(a.word):
			return true
		case context != none && !englishWord(strings.ToLower(a.word)) && (isSurname(b.word) || !eb):
			return true
		}
		return false
	}
	if a.script == scriptCyrillic || a.script == scriptGreek {
		// The second word counts as a surname only when it is no given
		// name too (Ивану is Иван's, not Иванов's).
		return declinedName(a.word, givenStem) || declinedName(b.word, surnameStem) && !declinedName(b.word, givenStem)
	}
	return false
}

// declinedName reports whether w is a listed name of a script with case
// endings, or differs from one only in an ending of up to two letters
// (Иван, Ивана, Ивану; Γιώργος, Γιώργο): some form of w without its last
// two letters or fewer is a form of a listed name without its last two
// letters or fewer, of three letters or more.
func declinedName(w string, list stemOf) bool {
	stems := names().stems
	for cut := 0; cut <= 2; cut++ {
		if stems[w]&list != 0 {
			return true
		}
		_, n := utf8.DecodeLastRuneInString(w)
		if w = w[:len(w)-n]; utf8.RuneCountInString(w) < 3 {
			return false
		}
	}
	return false
}

// coveredBy reports whether lower[start:end] lies within an occurrence of
// one of the phrases (lower case).
func coveredBy(lower string, start, end int, phrases []string) bool {
	for _, p := range phrases {
		for from := max(0, end-len(p)); from <= start; {
			k := strings.Index(lower[from:], p)
			if k < 0 {
				break
			}
			if at := from + k; at <= start && at+len(p) >= end {
				return true
			} else if at > start {
				break
			}
			from += k + 1
		}
	}
	return false
}

// hasTitleWord reports quickly whether text has an upper-case letter
// followed by a lower-case one, without which no name is found.
func hasTitleWord(text string) bool {
	for i := 0; i+1 < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			if d := text[i+1]; 'a' <= d && d <= 'z' || d >= utf8.RuneSelf {
				return true
			}
		} else if c >= utf8.RuneSelf {
			return !asciiOnly(text[i:]) // decided per word below
		}
	}
	return false
}

// nextWord reads the next word of text at or after i: a run of letters
// (and combining marks), with apostrophes and hyphens inside it.
func nextWord(text string, i int) (nameWord, int, bool) {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) {
			break
		}
		i += n
	}
	if i >= len(text) {
		return nameWord{}, i, false
	}
	start := i
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) {
			i += n
			continue
		}
		if isNameJoiner(r) && i+n < len(text) {
			if r2, _ := utf8.DecodeRuneInString(text[i+n:]); unicode.IsLetter(r2) {
				i += n
				continue
			}
		}
		break
	}
	w := nameWord{start: start, end: i, word: text[start:i]}
	for _, poss := range []string{"'s", "’s"} {
		if len(w.word) > len(poss)+1 && strings.HasSuffix(w.word, poss) {
			w.word = w.word[:len(w.word)-len(poss)]
		}
	}
	first, _ := utf8.DecodeRuneInString(w.word)
	w.script = scriptOf(first)
	w.title = titleCase(w.word)
	return w, i, true
}

func isNameJoiner(r rune) bool { return r == '\'' || r == '’' || r == '-' || r == '‐' }

// titleCase reports whether a word is written as names are: a capital,
// then lower case, with a capital again only after an apostrophe or a
// hyphen (O'Brien, Anne-Marie) or after Mc and Mac (McKay, MacLeod), and
// in one script.
func titleCase(w string) bool {
	first, n := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(first) || len(w) == n {
		return false
	}
	sc := scriptOf(first)
	lower := 0
	prev := first
	for i, r := range w[n:] {
		switch {
		case unicode.IsLower(r) || unicode.Is(unicode.Mn, r):
			lower++
		case unicode.IsUpper(r):
			if !isNameJoiner(prev) && !(i+n == 2 && w[:2] == "Mc") && !(i+n == 3 && w[:3] == "Mac") {
				return false
			}
		case isNameJoiner(r):
		default:
			return false
		}
		if unicode.IsLetter(r) && scriptOf(r) != sc {
			return false
		}
		prev = r
	}
	return lower > 0
}

// roleWords are the local parts of addresses that stand for a job, not a
// person (support@, no-reply@, data.team@).
var roleWords = map[string]bool{
	"team": true, "bot": true, "support": true, "admin": true, "noreply": true, "no": true, "reply": true,
	"info": true, "sales": true, "ops": true, "dev": true, "security": true, "billing": true, "help": true,
	"notifications": true, "alerts": true, "hello": true, "contact": true, "jobs": true, "careers": true,
	"service": true, "services": true, "it": true, "hr": true, "finance": true, "legal": true, "press": true,
	"marketing": true, "accounts": true, "root": true, "postmaster": true, "webmaster": true, "mailer": true,
	"daemon": true, "git": true, "github": true, "ci": true, "build": true, "deploy": true, "oncall": true,
}

// emailName returns the name an address's local part spells, if any:
// first.last, first_last, first-last (each part two letters or more, one
// at least no English word, neither a role word), firstlast when it
// splits into a listed given name and surname, and f.last, which names
// only a surname (last set, name empty). Digits after the name
// (jo.kemp2) are dropped.
func emailName(local string) (name, last string) {
	local = strings.TrimRight(local, "0123456789")
	if i := strings.IndexByte(local, '+'); i >= 0 {
		local = local[:i] // sub-addressing: ada.quill+jira
	}
	parts := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	for _, p := range parts {
		if !allLetters(p) || roleWords[strings.ToLower(p)] {
			return "", ""
		}
	}
	switch len(parts) {
	case 1:
		return splitJoined(parts[0]), ""
	case 2, 3:
		f, l := strings.ToLower(parts[0]), strings.ToLower(parts[len(parts)-1])
		if utf8.RuneCountInString(f) == 1 {
			if utf8.RuneCountInString(l) >= 3 && (isSurname(capitalizeWord(l)) || !englishWord(l)) {
				return "", capitalizeWord(l)
			}
			return "", ""
		}
		if utf8.RuneCountInString(l) < 2 {
			return "", ""
		}
		if englishWord(f) && englishWord(l) && !isGiven(capitalizeWord(f)) {
			return "", ""
		}
		words := make([]string, len(parts))
		for i, p := range parts {
			words[i] = capitalizeWord(strings.ToLower(p))
		}
		return strings.Join(words, " "), ""
	}
	return "", ""
}

// splitJoined splits a one-word local part into a listed given name and
// surname (adaquill: Ada Quill), or returns "".
func splitJoined(w string) string {
	lw := strings.ToLower(w)
	if utf8.RuneCountInString(lw) < 5 {
		return ""
	}
	for i := range lw {
		if i < 2 || len(lw)-i < 2 {
			continue
		}
		f, l := capitalizeWord(lw[:i]), capitalizeWord(lw[i:])
		if isGiven(f) && isSurname(l) {
			return f + " " + l
		}
	}
	return ""
}

func allLetters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// capitalizeWord writes a lower-case word with its first letter upper
// case, in any script.
func capitalizeWord(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[n:]
}
