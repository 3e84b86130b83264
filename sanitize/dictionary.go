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
// matchers that find them: one in decoded text, for rewriting, and one in
// the raw output bytes, for the leak check that follows.
type dictionary struct {
	byValue map[string]int // key -> index in list
	list    []entry

	built     int // len(list) when the matchers were built
	rewrite   *matcher
	verifyRaw *matcher
}

type entry struct {
	kind  Kind
	value string
}

// Needle payloads: the entry index, and which written form of it matched.
const (
	formXML  = 1 << 29 // &amp; &lt; &gt; &quot; &#39;
	formJSON = 1 << 30 // \" \\ and control escapes
	formMask = formXML | formJSON
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
	d.list = append(d.list, entry{k, v})
}

// isOriginal reports whether s is a learned original, so that no fake is
// ever one.
func (d *dictionary) isOriginal(s string) bool {
	_, folded := d.byValue["f"+strings.ToLower(s)]
	_, exact := d.byValue["e"+s]
	return folded || exact
}

// build makes the matchers for what has been learned, and the fakes of
// every original, before any text is rewritten.
func (d *dictionary) build(fk *faker) {
	if d.built == len(d.list) && d.rewrite != nil {
		return
	}
	var text, raw []needle

	for _, n := range triggerNeedles() {
		if n.payload < len(secretRules) {
			raw = append(raw, n)
		}
	}
	for i, e := range d.list {
		fk.fake(e.kind, e.value)
		fold := foldCase(e.kind)
		forms := []needle{{text: e.value, foldCase: fold, payload: i, wordBounds: true}}
		for _, x := range []string{xmlEscape(e.value), xmlEscapeApos(e.value)} {
			if x != e.value && x != forms[len(forms)-1].text {
				forms = append(forms, needle{text: x, foldCase: fold, payload: i | formXML, wordBounds: true})
			}
		}
		text = append(text, forms...)
		if len(e.value) < minLearned {
			continue
		}
		// In raw bytes a value also stands JSON-escaped, once in a string
		// and twice in a document nested in a string.
		for _, f := range forms {
			raw = append(raw, f)
			once := jsonEscape(f.text)
			twice := jsonEscape(once)
			for _, esc := range []string{once, twice} {
				if esc != f.text {
					raw = append(raw, needle{text: esc, foldCase: fold, payload: f.payload | formJSON, wordBounds: true})
				}
			}
		}
	}
	d.rewrite = newMatcher(append(text, triggerNeedles()...))
	d.verifyRaw = newMatcher(raw)
	d.built = len(d.list)
}

// span is the replacement of one match of the rewrite matcher.
func (d *dictionary) span(s string, m match, fk *faker) span {
	e := d.list[m.payload&^formMask]
	fake := fk.fake(e.kind, e.value)
	if foldCase(e.kind) {
		switch found := s[m.start:m.end]; {
		case found == strings.ToUpper(found) && found != strings.ToLower(found):
			fake = strings.ToUpper(fake)
		case found == strings.ToLower(found) && e.kind != KindSlackID:
			fake = strings.ToLower(fake)
		}
	}
	if m.payload&formXML != 0 {
		fake = xmlEscape(fake)
	}
	return span{m.start, m.end, fake, e.kind, "learned"}
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
