package sanitize

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/sanitize/words"
)

// minLearned is the shortest original, in characters, the sanitizer hunts
// and the leak check checks: shorter ones are words of every text. Parts
// of names may be one shorter ("Bo"); in a script written without spaces,
// where a name matches inside words, every value needs two.
const minLearned = 3

// dictionary holds the originals learned from known fields, and the
// matcher that finds them in folded text, for the rewrite.
type dictionary struct {
	byValue map[string]int // key -> index in list
	list    []entry
	folded  map[string]struct{} // every value folded, for isOriginal

	built   int // len(list) when the matcher was built
	matcher *matcher
}

type entry struct {
	kind  Kind
	value string
}

// opaque reports whether values of k are opaque ids, found wherever they
// stand, even inside a longer word ("0U05SIOBH0300"): nothing else is
// spelled like one.
func opaque(k Kind) bool {
	switch k {
	case KindSlackID, KindEmail, KindIdentityID, KindDashboardID, KindHexID, KindURL, KindSecret:
		return true
	}
	return false
}

// nameKind reports whether values of k are words of a person's name or
// handle, which a word of the English dictionary may also be.
func nameKind(k Kind) bool {
	return k == KindFirstName || k == KindLastName || k == KindName || k == KindHandle
}

// verbatim reports whether a value matches only as written (and in
// capitals): a one-word name that is also an English word ("Will",
// "Mark", "Rose"), since "will" in a text is the word, not the person.
func verbatim(k Kind, v string) bool {
	return nameKind(k) && !strings.ContainsAny(v, " .-_@") && englishWord(strings.ToLower(v))
}

func dictKey(k Kind, v string) string {
	if verbatim(k, v) {
		return "e" + string(k) + "\x00" + v
	}
	return "f" + string(k) + "\x00" + foldText(v).text
}

func (d *dictionary) add(k Kind, v string) {
	n := utf8.RuneCountInString(v)
	first, _ := utf8.DecodeRuneInString(v)
	switch {
	case n < 2:
		return
	case n < minLearned && !(k == KindFirstName || k == KindLastName) && !noSpace(first):
		return
	case k == KindNumericID && n < 5:
		return
	}
	key := dictKey(k, v)
	if _, ok := d.byValue[key]; ok {
		return
	}
	d.byValue[key] = len(d.list)
	d.list = append(d.list, entry{k, strings.Clone(v)})
	d.folded[foldText(v).text] = struct{}{}
}

// isOriginal reports whether s is, in any letter case, a learned original
// of any kind, or holds one as a word (a fake id that ends in a learned
// name), so that no fake is ever taken for one.
func (d *dictionary) isOriginal(s string) bool {
	if _, ok := d.folded[foldText(s).text]; ok {
		return true
	}
	if d.matcher == nil {
		return false
	}
	f := foldText(s)
	if f.at == nil {
		return len(d.matcher.find(s, allNeedles)) > 0
	}
	return len(d.matcher.find(f.text, foldedOnly)) > 0 || len(d.matcher.find(s, verbatimOnly)) > 0
}

// build makes the matcher for what has been learned, and the fakes of
// every original, before any document is rewritten.
func (d *dictionary) build(fk *faker) {
	if d.built == len(d.list) && d.matcher != nil {
		return
	}
	needles := make([]needle, 0, len(d.list))
	for i, e := range d.list {
		if verbatim(e.kind, e.value) {
			text := e.value
			if e.kind == KindHandle {
				text = "@" + text // a handle that is a word is one after @
			}
			needles = append(needles, needle{text: text, payload: i, wordBounds: true})
			if up := strings.ToUpper(text); up != text {
				needles = append(needles, needle{text: up, payload: i, wordBounds: true})
			}
			continue
		}
		needles = append(needles, needle{text: foldText(e.value).text, foldCase: true, payload: i, wordBounds: !opaque(e.kind)})
	}
	d.matcher = newMatcher(needles)
	d.built = len(d.list)
	// The fakes are drawn once the matcher knows every original, so that
	// no fake holds one.
	for _, e := range d.list {
		fk.fake(e.kind, e.value)
	}
}

// englishWord reports whether a lower-case word is in the English word
// list.
func englishWord(w string) bool {
	for _, r := range w {
		if r >= unicode.MaxASCII || !unicode.IsLower(r) {
			return false
		}
	}
	return words.English().Has(w)
}
