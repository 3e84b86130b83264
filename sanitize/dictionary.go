package sanitize

import (
	"strings"

	"github.com/agentvcr/agentvcr/internal/jsonstr"
)

// minLearned is the shortest original the sanitizer hunts, and the leak
// check checks: shorter ones are words of every text. Parts of names, which
// match only as written, may be one shorter ("Bo").
const minLearned = 3

// dictionary holds the originals learned from known fields, and the
// matcher that finds them, in every form they take in the raw bytes of a
// document, for the rewrite and for the leak check after it.
type dictionary struct {
	byValue map[string]int // key -> index in list
	list    []entry

	built   int // len(list) when the matcher was built
	matcher *matcher
}

type entry struct {
	kind  Kind
	value string
}

// The forms a value takes in raw bytes, as bits of a needle's payload
// beside the entry index: XML-escaped (as in author_name="..."), and
// JSON-escaped once (in a string) or twice (in a document inside a string).
const (
	formXML      = 1 << 29 // &amp; &lt; &gt; &quot; &#39;
	formXMLApos  = 1 << 28 // the same with &apos;
	formJSONOnce = 1 << 27
	formJSONTwce = 1 << 26
	formMask     = formXML | formXMLApos | formJSONOnce | formJSONTwce
)

// foldCase reports whether a kind matches in any letter case. The parts of
// names match as written: "Will" is a name, "will" a word.
func foldCase(k Kind) bool { return k != KindFirstName && k != KindLastName }

func dictKey(k Kind, v string) string {
	if foldCase(k) {
		return "f" + strings.ToLower(v)
	}
	return "e" + v
}

func (d *dictionary) add(k Kind, v string) {
	if len(v) < minLearned && (foldCase(k) || len(v) < minLearned-1) {
		return
	}
	key := dictKey(k, v)
	if _, ok := d.byValue[key]; ok {
		return
	}
	d.byValue[key] = len(d.list)
	d.list = append(d.list, entry{k, strings.Clone(v)})
}

// isOriginal reports whether s is a learned original, so that no fake is
// ever one.
func (d *dictionary) isOriginal(s string) bool {
	_, folded := d.byValue["f"+strings.ToLower(s)]
	_, exact := d.byValue["e"+s]
	return folded || exact
}

// inForm writes s in the form the payload bits name.
func inForm(s string, payload int) string {
	switch {
	case payload&formXML != 0:
		s = xmlEscape(s)
	case payload&formXMLApos != 0:
		s = xmlEscapeApos(s)
	}
	if payload&(formJSONOnce|formJSONTwce) != 0 {
		s = jsonEscape(s)
	}
	if payload&formJSONTwce != 0 {
		s = jsonEscape(s)
	}
	return s
}

// build makes the matcher for what has been learned, and the fakes of
// every original, before any document is rewritten.
func (d *dictionary) build(fk *faker) {
	if d.built == len(d.list) && d.matcher != nil {
		return
	}
	needles := triggerNeedles()
	for i, e := range d.list {
		fk.fake(e.kind, e.value)
		seen := map[string]bool{}
		for _, form := range []int{0, formXML, formXMLApos} {
			for _, esc := range []int{0, formJSONOnce, formJSONTwce} {
				text := inForm(e.value, form|esc)
				if seen[text] {
					continue
				}
				seen[text] = true
				needles = append(needles, needle{text: text, foldCase: foldCase(e.kind), payload: i | form | esc, wordBounds: true})
			}
		}
	}
	d.matcher = newMatcher(needles)
	d.built = len(d.list)
}

// span is the replacement of one match of a learned value: its fake, in
// the form the match was found in, in the letter case it was written in.
func (d *dictionary) span(s string, m match, fk *faker) span {
	e := d.list[m.payload&^formMask]
	fake := fk.fake(e.kind, e.value)
	if foldCase(e.kind) {
		switch upper, lower := letterCase(s[m.start:m.end]); {
		case upper && !lower:
			fake = strings.ToUpper(fake)
		case lower && !upper && e.kind != KindSlackID:
			fake = strings.ToLower(fake)
		}
	}
	return span{m.start, m.end, inForm(fake, m.payload&formMask), e.kind, "learned"}
}

// letterCase reports whether s has upper-case and lower-case ASCII
// letters.
func letterCase(s string) (upper, lower bool) {
	for i := 0; i < len(s); i++ {
		upper = upper || 'A' <= s[i] && s[i] <= 'Z'
		lower = lower || 'a' <= s[i] && s[i] <= 'z'
	}
	return upper, lower
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }

// xmlEscapeApos is the other common escaping of an apostrophe.
func xmlEscapeApos(s string) string { return strings.ReplaceAll(xmlEscape(s), "&#39;", "&apos;") }

// jsonEscape returns s as it stands inside a JSON string.
func jsonEscape(s string) string {
	q := jsonstr.Append(nil, s)
	return string(q[1 : len(q)-1])
}
