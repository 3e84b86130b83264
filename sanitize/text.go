package sanitize

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is one replacement found in a text: bytes [start, end) become
// repl.
type span struct {
	start, end int
	repl       string
	kind       Kind
	detector   string // what found it, for the report
}

// view is a text as the detectors read it, with the way back to the
// string it came from: the decoded string itself, or that string with its
// HTML entities or its percent escapes decoded (a name in
// author_name="O&#39;Brien", an id in a URL as %2FT04GLBXCRP%2F).
type view struct {
	text string
	at   []int32 // at[i]: where text byte i starts in the string; nil: the same place
	// enc writes a replacement as it stands in the string.
	enc func(string) string
}

func (v *view) orig(i int) int {
	if v.at == nil {
		return i
	}
	return int(v.at[i])
}

// textEdits returns the replacements in one decoded string, in order and
// not overlapping: learned values and detector finds in the string and in
// its entity- and percent-decoded views, the longest winning where two
// overlap, secrets before all.
func (s *Sanitizer) textEdits(text string) []edit {
	// Texts repeat (keys, roles, types, and in a conversation the same
	// system prompt, tool descriptions and tool results in every turn):
	// what was found in one is remembered, until the dictionary grows, in
	// a memo of bounded size.
	if len(text) <= memoMaxText {
		if s.memoBuilt != s.dict.built {
			clear(s.memo)
			s.memoBuilt, s.memoBytes = s.dict.built, 0
		}
		if e, ok := s.memo[text]; ok {
			return e
		}
		e := s.findEdits(text)
		if s.memoBytes += len(text); s.memoBytes > memoMaxBytes {
			clear(s.memo)
			s.memoBytes = len(text)
		}
		s.memo[strings.Clone(text)] = e
		return e
	}
	return s.findEdits(text)
}

// memoMaxText is the longest text the memos keep; memoMaxBytes bounds
// the text a memo holds, so memory stays flat however long the run.
const (
	memoMaxText  = 8 << 10
	memoMaxBytes = 4 << 20
)

func (s *Sanitizer) findEdits(text string) []edit {
	spans := s.viewSpans(view{text: text}, nil)
	if v, ok := entityView(text); ok {
		spans = s.viewSpans(v, spans)
	}
	if v, ok := percentView(text); ok {
		spans = s.viewSpans(v, spans)
	}
	if v, ok := visibleView(text); ok {
		spans = s.viewSpans(v, spans)
	}
	if len(text) >= minBase64 {
		spans = s.withBase64(text, spans)
	}
	return resolve(text, spans)
}

// withBase64 adds the base64 runs of text that are rewritten whole, in
// place of what was found inside their encoded bytes.
func (s *Sanitizer) withBase64(text string, spans []span) []span {
	runs := s.base64Spans(text, nil)
	if len(runs) == 0 {
		return spans
	}
	spans = slices.DeleteFunc(spans, func(sp span) bool {
		for _, r := range runs {
			if sp.start >= r.start && sp.end <= r.end {
				return true
			}
		}
		return false
	})
	return append(spans, runs...)
}

// viewSpans appends the replacements found in a view, in the coordinates
// of the string it came from.
func (s *Sanitizer) viewSpans(v view, out []span) []span {
	found := s.learnedSpans(v.text, nil)
	found = s.detect(v.text, found)
	for _, sp := range found {
		if v.at != nil || v.enc != nil {
			sp.start, sp.end = v.orig(sp.start), v.orig(sp.end)
			if v.enc != nil {
				sp.repl = v.enc(sp.repl)
			}
		}
		out = append(out, sp)
	}
	return out
}

// learnedSpans finds the learned values in text: in its folded form, and
// the values that match only as written (words of the dictionary) in text
// itself. Each becomes its fake, in the letter case it was written in.
func (s *Sanitizer) learnedSpans(text string, out []span) []span {
	d := &s.dict
	if d.matcher == nil || text == "" {
		return out
	}
	f := foldText(text)
	add := func(ms []match, fold *folded) {
		for _, m := range ms {
			start, end := m.start, m.end
			if fold != nil {
				start, end = fold.orig(start), fold.orig(end)
			}
			e := d.list[m.payload]
			if text[start] == '@' && e.kind == KindHandle {
				start++ // a handle that is a word, matched with its @
			}
			out = append(out, span{start, end, withCase(s.fk.fake(e.kind, e.value), text[start:end], e.kind), e.kind, "learned"})
		}
	}
	if f.at == nil {
		add(d.matcher.find(text, allNeedles), nil)
		return out
	}
	add(d.matcher.find(f.text, foldedOnly), &f)
	add(d.matcher.find(text, verbatimOnly), nil)
	return out
}

// withCase writes a fake in the letter case its original was written in
// where that was all upper or all lower case (ids keep their own).
func withCase(fake, orig string, k Kind) string {
	if k == KindSlackID || k == KindSecret {
		return fake
	}
	upper, lower := false, false
	for _, r := range orig {
		upper = upper || unicode.IsUpper(r)
		lower = lower || unicode.IsLower(r)
	}
	switch {
	case upper && !lower:
		return strings.ToUpper(fake)
	case lower && !upper:
		return strings.ToLower(fake)
	}
	return fake
}

// resolve picks the replacements to make: secrets first, then the longest,
// then the leftmost; none that overlaps one picked, none that changes
// nothing. It returns them as edits, in order.
func resolve(text string, spans []span) []edit {
	if len(spans) == 0 {
		return nil
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		if sa, sb := a.kind == KindSecret, b.kind == KindSecret; sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		if la, lb := a.end-a.start, b.end-b.start; la != lb {
			return lb - la
		}
		return a.start - b.start
	})
	var kept []span // sorted by start
	for _, sp := range spans {
		if sp.start >= sp.end || text[sp.start:sp.end] == sp.repl {
			continue
		}
		i, _ := slices.BinarySearchFunc(kept, sp.start, func(k span, pos int) int { return k.start - pos })
		if i > 0 && kept[i-1].end > sp.start || i < len(kept) && kept[i].start < sp.end {
			continue
		}
		kept = slices.Insert(kept, i, sp)
	}
	edits := make([]edit, len(kept))
	for i, sp := range kept {
		edits[i] = edit{start: sp.start, end: sp.end, repl: sp.repl, kind: sp.kind, detector: sp.detector}
	}
	return edits
}

// decodedView decodes a text with decode, which says what the bytes at
// s[i:] decode to and how many it took (0 for none, which are kept as
// they are); each decoded byte maps to where its original starts.
func decodedView(s string, decode func(s string, i int) ([]byte, int)) (view, bool) {
	out := make([]byte, 0, len(s))
	at := make([]int32, 0, len(s)+1)
	changed := false
	for i := 0; i < len(s); {
		if dec, n := decode(s, i); n > 0 {
			out = append(out, dec...)
			for range dec {
				at = append(at, int32(i))
			}
			i += n
			changed = true
			continue
		}
		out = append(out, s[i])
		at = append(at, int32(i))
		i++
	}
	if !changed {
		return view{}, false
	}
	return view{text: string(out), at: append(at, int32(len(s)))}, true
}

// entityView decodes the HTML entities of a text (&amp; &lt; &gt; &quot;
// &#39; &apos; &nbsp; and numeric ones); a replacement is written back
// with <, >, &, " and ' escaped the way the text escaped its apostrophes.
func entityView(s string) (view, bool) {
	if !strings.Contains(s, "&") || !strings.Contains(s, ";") {
		return view{}, false
	}
	apos := "&#39;"
	v, ok := decodedView(s, func(s string, i int) ([]byte, int) {
		if s[i] != '&' {
			return nil, 0
		}
		r, n := entityAt(s[i:])
		if n > 0 && s[i:i+n] == "&apos;" {
			apos = "&apos;"
		}
		return utf8.AppendRune(nil, r), n
	})
	if ok {
		v.enc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", apos).Replace
	}
	return v, ok
}

var namedEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": '\u00a0'}

// entityAt reads the entity at the start of s: its rune and length, or 0.
func entityAt(s string) (rune, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 10 {
		return 0, 0
	}
	name := s[1:semi]
	if r, ok := namedEntities[name]; ok {
		return r, semi + 1
	}
	if name[0] != '#' {
		return 0, 0
	}
	var v int64
	digits := name[1:]
	base := int64(10)
	if len(digits) > 0 && (digits[0] == 'x' || digits[0] == 'X') {
		base, digits = 16, digits[1:]
	}
	if digits == "" {
		return 0, 0
	}
	for _, c := range digits {
		d := int64(strings.IndexRune("0123456789abcdef", unicode.ToLower(c)))
		if d < 0 || d >= base {
			return 0, 0
		}
		v = v*base + d
	}
	if v <= 0 || v > unicode.MaxRune {
		return 0, 0
	}
	return rune(v), semi + 1
}

// visibleView is a text without its invisible characters (zero-width
// spaces and joiners, soft hyphens, and bytes that are no character),
// which can stand inside a name or an address and hide it.
func visibleView(s string) (view, bool) {
	if asciiOnly(s) {
		return view{}, false
	}
	var out []byte
	var at []int32
	changed := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			changed = true
		} else {
			out = append(out, s[i:i+n]...)
			for k := range n {
				at = append(at, int32(i+k))
			}
		}
		i += n
	}
	if !changed {
		return view{}, false
	}
	at = append(at, int32(len(s)))
	return view{text: string(out), at: at}, true
}

// percentView decodes the percent escapes of a text (%2F, %40); a
// replacement is written back percent-encoded but for letters, digits and
// -._~.
func percentView(s string) (view, bool) {
	if !strings.Contains(s, "%") {
		return view{}, false
	}
	v, ok := decodedView(s, func(s string, i int) ([]byte, int) {
		if s[i] == '%' && i+2 < len(s) && isHexByte(s[i+1]) && isHexByte(s[i+2]) {
			return []byte{unhex(s[i+1])<<4 | unhex(s[i+2])}, 3
		}
		return nil, 0
	})
	v.enc = percentEncode
	return v, ok
}

func isHexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func percentEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}
