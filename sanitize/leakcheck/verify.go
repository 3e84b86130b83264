package leakcheck

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/agentvcr/agentvcr/sanitize/words"
	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// The Checker reads what the rewrite wrote with code of its own: its own
// JSON scanner (walk.go) to decode strings and nested documents, net/url,
// html and encoding/base64 for the forms a value may take inside a
// string, x/text's NFKC, case folding and NFD for the forms of a name, a
// needle set of its own for the learned values (match.go), and detectors
// of its own (detect.go, classes.go, names.go). It imports nothing of the
// rewrite: only the secret rules (gitleaks' set, internal/secrets, itself
// checked against gitleaks' detector), libphonenumber, the word lists and
// the fakes' marks (sanitize/words, sanitize/fakemark) are shared with it:
// libraries, data and a format, not matching code. Whatever it finds is a
// hit.
//
// It reads each document once: one walk of the output that validates it,
// decodes every string once, and runs every check on what it decoded,
// and one light walk of the input that counts its nested documents. What
// it looks for is built as values are added.

// ErrLeak is matched by a *LeakError: personal data or a secret survived
// sanitizing, and nothing was written.
var ErrLeak = errors.New("personal data or secrets survived sanitizing")

// Hit is one value the leak check found. It never holds the value, nor a
// key that held one: only where it is (object keys that are not plain
// identifiers, or held the value, as digests), what kind it is, and a
// digest of it under the key.
type Hit struct {
	Seq    int64  `json:"seq"` // -1 outside rows
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Digest string `json:"digest,omitempty"`
}

// LeakError lists what survived in one file: the sanitizer returns it,
// and writes nothing.
type LeakError struct {
	File string
	Hits []Hit
}

func (e *LeakError) Error() string {
	var b strings.Builder
	file := e.File
	if file == "" {
		file = "<input>"
	}
	fmt.Fprintf(&b, "%s: refusing to write: %v:", file, ErrLeak)
	for i, h := range e.Hits {
		if i == 10 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Hits)-10)
			break
		}
		if i > 0 {
			b.WriteByte(';')
		}
		if h.Seq >= 0 {
			fmt.Fprintf(&b, " row seq %d", h.Seq)
		}
		fmt.Fprintf(&b, " %s: %s", h.Path, h.Kind)
		if h.Digest != "" {
			fmt.Fprintf(&b, " (digest %s)", h.Digest)
		}
	}
	return b.String()
}

func (e *LeakError) Unwrap() error { return ErrLeak }

// Verify checks a sanitized document out against its input in: every
// value added, in every form, every detector, and every row holding as
// many documents nested in its strings as it did. A hit of kind "invalid
// JSON" means out does not parse.
func (v *Checker) Verify(in string, out []byte) []Hit {
	r := &leakRun{found: v.found, key: v.foundInKey, member: v.det.memberHits, digest: v.digest, nested: map[int64]int{}}
	if !r.run(unsafe.String(unsafe.SliceData(out), len(out))) {
		return []Hit{{Seq: -1, Kind: "invalid JSON"}}
	}
	hits := make([]Hit, 0, len(r.hits))
	for _, h := range r.hits {
		hits = append(hits, Hit{Seq: h.seq, Path: h.path, Kind: h.kind, Digest: h.digest})
	}
	// The input's nested documents, by row, only when they may differ:
	// the same strings (by their place among the document's string
	// values) hold documents in both, or the rows are read again.
	var sig nestedSignature
	sig.read(in, &v.nested)
	if !sig.same(&r.walk.sig) {
		for seq, n := range countNested(in) {
			if r.nested[seq] < n {
				hits = append(hits, Hit{Seq: seq, Kind: "a document nested in a string no longer parses"})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Seq < hits[j].Seq })
	return hits
}

// countNested counts the strings of a document that are JSON
// documents, by the seq of their row (-1 outside rows).
func countNested(doc string) map[int64]int {
	counts := map[int64]int{}
	rowCount := 0
	w := &leakWalk{seq: -1,
		nested:   func(w *leakWalk) { rowCount++ },
		rowStart: func(w *leakWalk) { rowCount = 0 },
		rowEnd: func(w *leakWalk) {
			if rowCount > 0 {
				counts[w.seq] += rowCount
			}
			rowCount = 0
		},
	}
	w.walkDoc(doc)
	if rowCount > 0 {
		counts[-1] += rowCount
	}
	return counts
}

// nestedSignature says which string values of a document hold JSON
// documents: how many string values it has, at every depth, and a hash
// of the places among them of those that hold a document.
type nestedSignature struct {
	values int
	hash   uint64
	record bool  // keep docs
	docs   []int // the places of the values that hold documents
}

func (n *nestedSignature) add(nested bool) {
	n.values++
	if nested {
		n.hash = (n.hash ^ uint64(n.values)) * 0x100000001b3
		if n.record {
			n.docs = append(n.docs, n.values)
		}
	}
}

// same reports whether two signatures say the same.
func (n *nestedSignature) same(o *nestedSignature) bool {
	return n.values == o.values && n.hash == o.hash
}

// read finds the string values of a valid JSON document and the
// documents in them, at every depth, reading little but strings: a
// string followed by a colon is a key. Documents nested in strings are
// remembered in seen by their raw bytes, as the place of the string
// values inside them that hold documents (a model request repeats the
// conversation so far).
func (n *nestedSignature) read(doc string, seen *nestedMemo) {
	var w leakWalk
	for i := 0; i < len(doc); {
		q := strings.IndexByte(doc[i:], '"')
		if q < 0 {
			return
		}
		start := i + q
		end := closingQuote(doc, start+1)
		if end < 0 {
			return
		}
		end++
		if j := skipWS(doc, end); j < len(doc) && doc[j] == ':' {
			i = j + 1
			continue
		}
		i = end
		if !mayBeDocument(doc, start+1) {
			n.add(false)
			continue
		}
		raw := doc[start:end]
		if inner, ok := seen.m[raw]; ok {
			n.add(inner != nil)
			n.addInner(inner)
			continue
		}
		_, text, _ := w.str(raw, 0)
		t := strings.TrimSpace(text)
		nested := len(t) > 1 && (t[0] == '{' || t[0] == '[') && validJSON(t)
		n.add(nested)
		if !nested {
			seen.put(raw, nil)
			continue
		}
		var sub nestedSignature
		sub.record = true
		sub.read(t, seen) // t is in this call's own scratch buffer
		inner := &nestedInner{values: sub.values, docs: sub.docs}
		seen.put(raw, inner)
		n.addInner(inner)
	}
}

// nestedInner is what a nested document holds: how many string values,
// and which of them (by place, from 1) hold documents.
type nestedInner struct {
	values int
	docs   []int
}

func (n *nestedSignature) addInner(inner *nestedInner) {
	if inner == nil {
		return
	}
	base := n.values
	for _, d := range inner.docs {
		n.values = base + d - 1
		n.add(true)
	}
	n.values = base + inner.values
}

// nestedMemo remembers the strings that may be documents, by their raw
// bytes: nil for those that are none.
type nestedMemo struct {
	m     map[string]*nestedInner
	bytes int
}

func (m *nestedMemo) put(raw string, inner *nestedInner) {
	if m.m == nil || m.bytes > memoBudget {
		m.m, m.bytes = map[string]*nestedInner{}, 0
	}
	m.m[strings.Clone(raw)] = inner
	m.bytes += len(raw) + 64
}

// closingQuote returns the index of the quote that ends the string whose
// body starts at s[i], or -1.
func closingQuote(s string, i int) int {
	for {
		q := strings.IndexByte(s[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		b := q
		for b > i && s[b-1] == '\\' {
			b--
		}
		if (q-b)%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// leakRun is one leak check of one document: the walk, and the hits of
// the row it is in, named when the row's seq and type are known.
type leakRun struct {
	found  func(text string, number bool) []string
	key    func(text string) []string // found, for an object key
	member func(name, text string, number bool, found []string) []string
	digest func(kind, value string) string // of keys in paths
	walk   leakWalk
	hits   []leakHit
	// pending are the hits of the row being walked, not yet named.
	pending []leakHit
	frames  []objectFrame
	nested  map[int64]int
	inRow   int // nested documents in the row being walked
	kinds   []string
}

type leakHit struct {
	seq          int64
	path         string
	raw          []string // the path while unnamed
	key          bool
	kind, digest string
}

// run walks doc and reports whether it is valid JSON.
func (r *leakRun) run(doc string) bool {
	r.walk = leakWalk{seq: -1, leaf: r.leaf,
		nested: func(w *leakWalk) {
			if w.inRow {
				r.inRow++
			} else {
				r.nested[-1]++
			}
		},
		rowStart: func(w *leakWalk) { r.inRow = 0 },
		rowEnd: func(w *leakWalk) {
			if r.inRow > 0 {
				r.nested[w.seq] += r.inRow
			}
			for _, h := range r.pending {
				r.name(&h, w.seq, w.rowType)
			}
			r.pending = r.pending[:0]
		},
		objectStart: func(w *leakWalk) { r.frames = append(r.frames, objectFrame{}) },
		objectEnd: func(w *leakWalk) {
			f := r.frames[len(r.frames)-1]
			r.frames = r.frames[:len(r.frames)-1]
			if f.serviceAccount {
				for _, p := range f.pending {
					r.add(w, p, false, []string{"secret:gcp-service-account"})
				}
			}
		},
	}
	ok := r.walk.walkDoc(doc)
	for _, h := range r.pending { // a row that did not end: the document is invalid
		r.name(&h, -1, "")
	}
	return ok
}

func (r *leakRun) leaf(w *leakWalk, text string, number, key bool) {
	var kinds []string
	if key && r.key != nil {
		kinds = r.key(text)
	} else {
		kinds = r.found(text, number)
	}
	if n := len(w.path) - 1; !key && n >= 0 && w.path[n] != ">" && w.path[n] != "[#]" {
		name := w.path[n]
		r.kinds = r.member(name, text, number, append(r.kinds[:0], kinds...))
		kinds = r.kinds
		if len(r.frames) > 0 && !number {
			f := &r.frames[len(r.frames)-1]
			switch {
			case name == "type" && text == "service_account":
				f.serviceAccount = true
			case gcpMemberLeaks(name, text):
				f.pending = append(f.pending, append([]string(nil), w.path...))
			}
		}
	}
	if len(kinds) > 0 {
		r.add(w, w.path, key, kinds)
	}
}

// add records the hits of one string, number or key, once per kind.
func (r *leakRun) add(w *leakWalk, path []string, key bool, kinds []string) {
	for i, f := range kinds {
		if slicesIndex(kinds[:i], f) >= 0 {
			continue
		}
		kind, digest, _ := strings.Cut(f, "\t")
		h := leakHit{kind: kind, digest: digest, key: key, raw: append([]string(nil), path...)}
		if w.inRow {
			r.pending = append(r.pending, h)
		} else {
			r.name(&h, -1, "")
		}
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// name writes where a hit is, now that its row's seq and type are known.
func (r *leakRun) name(h *leakHit, seq int64, rowType string) {
	h.seq = seq
	h.path = hitPath(&target{path: h.raw, key: h.key, seq: seq, rowType: rowType}, r.digest, func(seg string) bool { return len(r.found(seg, false)) == 0 })
	h.raw = nil
	r.hits = append(r.hits, *h)
}

// A Value is an original the sanitizer learned, which must not survive:
// its kind (the sanitizer's: "email", "person_name", "slack_id"...) and
// its text.
type Value struct {
	Kind, Text string
}

// Config configures a Checker.
type Config struct {
	Rules Rules
	// Digest names a value in a hit, as a digest under the sanitizer's
	// key, so a message tells hits apart without holding the value.
	// Kind "key" digests an object key. Nil uses a fixed key.
	Digest func(kind, value string) string
	// Issued reports whether a value is a fake the sanitizer wrote, for
	// the kinds whose fakes carry no mark (phones by their member's name
	// ("phone"), dates of birth ("date_of_birth"), passport numbers
	// ("passport")). Nil, as in Check, does not look for dates of birth
	// and passport numbers, and takes a phone libphonenumber calls
	// invalid for a fake.
	Issued func(kind, value string) bool
}

// Rules are the product's exceptions the detectors honour.
type Rules struct {
	NotSecrets []string // expressions of ids that are no secrets
	IDFields   []string // object keys whose values are ids, not names
	NotNames   []string // phrases the name rule would take for names
	// NoNames turns the name rule off, for files sanitized without the
	// name detector.
	NoNames bool
}

// A Checker is the leak check of one sanitizer: the values it learned,
// and the detectors. It is not safe for concurrent use.
type Checker struct {
	digest func(kind, value string) string
	values []Value
	folded *needleSet       // normalized values, in normalized text
	exact  *needleSet       // values that match only as written, and in capitals
	byText map[string][]int // normalized value -> values, for numbers
	det    *detectors
	memo   findingsMemo // the detectors' findings
	keys   findingsMemo // the same of object keys, which are few and repeat
	// digitLens has bit n set when a value of n digits, a number's only
	// possible match, is in byText.
	digitLens uint64
	nested    nestedMemo // the input's nested documents
	forms     formReader
}

// New returns a Checker with no values.
func New(cfg Config) (*Checker, error) {
	det, err := newDetectors(cfg.Rules)
	if err != nil {
		return nil, err
	}
	det.issued = cfg.Issued
	digest := cfg.Digest
	if digest == nil {
		digest = fixedDigest
	}
	return &Checker{digest: digest, folded: newNeedleSet(true), exact: newNeedleSet(false), byText: map[string][]int{}, det: det}, nil
}

// fixedDigest digests under a fixed key: Check has no key, and its
// digests only tell hits of one run apart.
func fixedDigest(kind, value string) string {
	m := hmac.New(sha256.New, []byte("agentvcr-check-digests"))
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))[:8]
}

// Add adds an original to look for, in every form it may take.
func (v *Checker) Add(val Value) {
	i := len(v.values)
	v.values = append(v.values, val)
	if verbatim(val.Kind, val.Text) {
		word := val.Text
		if val.Kind == kindHandle {
			word = "@" + word
		}
		v.exact.add(word, i, false)
		if up := strings.ToUpper(word); up != word {
			v.exact.add(up, i, false)
		}
		return
	}
	n := normalize(val.Text)
	v.folded.add(n, i, anywhere(val.Kind))
	v.byText[n] = append(v.byText[n], i)
	if strings.Trim(n, "0123456789") == "" {
		v.digitLens |= 1 << min(len(n), 63)
	}
}

// Len is how many values were added.
func (v *Checker) Len() int { return len(v.values) }

// Clean reports whether the leak check finds nothing in a text, as an
// object key: a report may show such a key as written.
func (v *Checker) Clean(key string) bool { return len(v.foundInKey(key)) == 0 }

// The kinds of values the Checker treats apart.
const (
	kindSlackID     = "slack_id"
	kindEmail       = "email"
	kindName        = "person_name"
	kindFirstName   = "first_name"
	kindLastName    = "last_name"
	kindHandle      = "handle"
	kindIdentityID  = "identity_id"
	kindDashboardID = "dashboard_id"
	kindHexID       = "hex_id"
	kindURL         = "url"
	kindSecret      = "secret"
	kindPhone       = "phone"
	kindBirthDate   = "date_of_birth"
	kindPassport    = "passport"
)

// anywhere reports whether values of a kind are ids, found wherever they
// stand, even inside a word; others are found as words.
func anywhere(k string) bool {
	switch k {
	case kindSlackID, kindEmail, kindIdentityID, kindDashboardID, kindHexID, kindURL, kindSecret:
		return true
	}
	return false
}

// verbatim reports whether a value is found only as written (and in
// capitals): a one-word name that is also an English word ("Will",
// "Mark", "Rose"), which the sanitizer replaces only as written, since
// "will" in a text is the word, not the person.
func verbatim(k, v string) bool {
	switch k {
	case kindName, kindFirstName, kindLastName, kindHandle:
	default:
		return false
	}
	if strings.ContainsAny(v, " .-_@") {
		return false
	}
	for _, r := range v {
		if r >= unicode.MaxASCII || !unicode.IsLetter(r) {
			return false
		}
	}
	return words.English().Has(strings.ToLower(v))
}

// memoMax is the longest text whose findings are remembered: keys, roles,
// types and names repeat, and so do whole messages (a model request holds
// the conversation so far).
const memoMax = 4096

// findingsMemo remembers, for texts seen before, the forms they decode to
// (beyond themselves), the detectors' findings in them, and the learned
// values in them as of a size of the dictionary, up to a budget of bytes,
// then starts again.
type findingsMemo struct {
	m     map[string]*memoEntry
	bytes int
}

type memoEntry struct {
	forms   []string // the text's forms but itself
	found   []string // the detectors'
	learned []string // learned values, as of at entries of the dictionary
	at      int
}

const memoBudget = 16 << 20

func (m *findingsMemo) get(text string) *memoEntry {
	if len(text) > memoMax || m.m == nil {
		return nil
	}
	return m.m[text]
}

func (m *findingsMemo) put(text string, forms, found []string) *memoEntry {
	if len(text) > memoMax {
		return nil
	}
	if m.m == nil || m.bytes > memoBudget {
		m.m, m.bytes = map[string]*memoEntry{}, 0
	}
	e := &memoEntry{at: -1}
	if len(forms) > 1 {
		e.forms = append([]string(nil), forms[1:]...)
		for _, f := range e.forms {
			m.bytes += len(f)
		}
	}
	if len(found) > 0 {
		e.found = append([]string(nil), found...)
	}
	m.m[strings.Clone(text)] = e
	m.bytes += len(text) + 96
	return e
}

// found returns what the leak check finds in one string or number: kinds,
// each with a digest after a tab. The slice may be shared: append to a
// copy.
func (v *Checker) found(text string, number bool) []string {
	return v.find(text, number, &v.memo)
}

// foundInKey is found for an object key.
func (v *Checker) foundInKey(text string) []string {
	return v.find(text, false, &v.keys)
}

func (v *Checker) find(text string, number bool, memo *findingsMemo) []string {
	if number {
		return v.numberHits(text)
	}
	e := memo.get(text)
	if e == nil {
		forms := v.forms.read(text)
		var found []string
		for _, f := range forms {
			found = v.det.textHits(f, found)
		}
		if e = memo.put(text, forms, found); e == nil {
			for _, f := range forms {
				found = v.learned(f, found)
			}
			return found
		}
	}
	if e.at != len(v.values) {
		e.learned = v.learned(text, nil)
		for _, f := range e.forms {
			e.learned = v.learned(f, e.learned)
		}
		e.at = len(v.values)
	}
	switch {
	case len(e.learned) == 0:
		return e.found
	case len(e.found) == 0:
		return e.learned
	}
	return append(append([]string(nil), e.learned...), e.found...)
}

// learned appends the learned values in one form of a string.
func (v *Checker) learned(s string, found []string) []string {
	n := s
	if !isASCII(s) {
		n = normalize(s)
	}
	v.folded.find(n, func(start, end int, id int32) {
		alone := -1
		for _, i := range v.folded.owners[id] {
			e := v.values[i]
			if !anywhere(e.Kind) {
				if alone < 0 {
					alone = 0
					if standsAlone(n, start, end) {
						alone = 1
					}
				}
				if alone == 0 {
					continue
				}
			}
			found = append(found, e.Kind+"\t"+v.digest(e.Kind, e.Text))
		}
	})
	v.exact.find(s, func(start, end int, id int32) {
		if !standsAlone(s, start, end) {
			return
		}
		for _, i := range v.exact.owners[id] {
			e := v.values[i]
			found = append(found, e.Kind+"\t"+v.digest(e.Kind, e.Text))
		}
	})
	return found
}

// numberHits looks at a JSON number: a learned value written as one, a
// phone number in international form without its +, a card number.
func (v *Checker) numberHits(num string) []string {
	var found []string
	// A sign, and a fraction of zeros, write the same integer.
	num = strings.TrimPrefix(num, "-")
	if i := strings.IndexByte(num, '.'); i >= 0 && strings.TrimRight(num[i+1:], "0") == "" {
		num = num[:i]
	}
	if v.digitLens&(1<<min(len(num), 63)) != 0 {
		for _, i := range v.byText[num] {
			e := v.values[i]
			found = append(found, e.Kind+"\t"+v.digest(e.Kind, e.Text))
		}
	}
	if len(num) >= 10 && strings.Trim(num, "0123456789") == "" {
		// +1 numbers have eleven digits: others need no parse.
		if len(num) <= 15 && (num[0] != '1' || len(num) == 11) && phoneValid("+"+num) {
			found = append(found, "phone")
		}
		if cardValid(num) {
			found = append(found, "card")
		}
	}
	return found
}

// target is where a hit is, as hitPath names it.
type target struct {
	seq     int64
	rowType string   // of the row the target is in
	path    []string // keys, [#] and >, raw
	key     bool     // the hit is in the last key of path
}

// hitPath names where a hit is: the row's type and the path's keys where
// they are plain identifiers in which clean finds nothing, digests of the
// others and of the key the hit is in, so that no message shows a value.
func hitPath(t *target, digest func(kind, value string) string, clean func(string) bool) string {
	var b strings.Builder
	sep := false // a key written next needs a dot before it
	for i, seg := range t.path {
		switch {
		case seg == "[#]" && i == 1 && t.path[0] == "events":
			b.Reset()
			if plainKey(t.rowType) && clean(t.rowType) {
				b.WriteString(t.rowType)
			} else {
				b.WriteString("events[#]")
			}
			sep = true
		case seg == ">":
			b.WriteString(seg)
			sep = false
		case seg == "[#]":
			b.WriteString(seg)
			sep = true
		default:
			if sep {
				b.WriteByte('.')
			}
			if plainKey(seg) && !(t.key && i == len(t.path)-1) && clean(seg) {
				b.WriteString(seg)
			} else {
				b.WriteString("<key " + digest("key", seg) + ">")
			}
			sep = true
		}
	}
	return b.String()
}

// formReader lists the forms of a text: the text and what it decodes
// to.
type formReader struct {
	forms []string
	buf   []byte // base64's scratch
}

// read returns the text and what it decodes to: without what does not
// show, NFKC, HTML entities, percent escapes (as a path and as a query),
// and the base64 tokens in it that decode to text, with, where one of
// those is a JSON document, its keys and strings at every depth, each in
// its own forms (to depth 2). The slice is reused by the next call.
func (f *formReader) read(s string) []string {
	f.forms = f.appendForms(f.forms[:0], s, 0)
	return f.forms
}

func (f *formReader) appendForms(out []string, s string, depth int) []string {
	out = append(out, s)
	if !isASCII(s) {
		if v := withoutInvisible(s); v != s {
			out = append(out, v)
		}
		if n := norm.NFKC.String(s); n != s {
			out = append(out, n)
		}
	}
	if strings.IndexByte(s, '&') >= 0 {
		if u := html.UnescapeString(s); u != s {
			out = append(out, u)
		}
	}
	if strings.IndexByte(s, '%') >= 0 {
		for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
			if u, err := unescape(s); err == nil && u != s {
				out = append(out, u)
			} else if err != nil {
				out = append(out, lenientUnescape(s))
			}
		}
	}
	if len(s) < 12 {
		return out
	}
	for i := 0; i < len(s); {
		start := i
		tok, next := nextBase64Candidate(s, i)
		i = next
		if tok == "" {
			continue
		}
		// Base64 wrapped over lines (GitHub's contents API: 60 a line) is
		// read whole: its lines alone decode to pieces of the text, which
		// cut a fake address in two ("x@example.c", "om").
		text, ok := "", false
		if joined, end := wrappedBase64(s, start, next); end > next {
			if text, ok = f.decodeBase64Text(joined); ok {
				i = end
			}
		}
		if !ok {
			text, ok = f.decodeBase64Text(tok)
		}
		if !ok {
			continue
		}
		if depth >= 2 {
			out = append(out, text)
			continue
		}
		out = f.appendForms(out, text, depth+1)
		if t := strings.TrimSpace(text); len(t) > 1 && (t[0] == '{' || t[0] == '[') && validJSON(t) {
			out = f.appendDocument(out, t, depth+1)
		}
	}
	return out
}

// appendDocument appends the forms of the keys and strings of a JSON
// document.
func (f *formReader) appendDocument(out []string, doc string, depth int) []string {
	w := &leakWalk{seq: -1, leaf: func(_ *leakWalk, leaf string, number, _ bool) {
		if !number {
			out = f.appendForms(out, strings.Clone(leaf), depth)
		}
	}}
	w.walkDoc(doc)
	return out
}

// lenientUnescape decodes the %XX escapes that are valid and leaves the
// rest, where url's decoders give up on the whole text.
func lenientUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// nextBase64Candidate returns the first run, from s[i:], of 12 base64
// characters or more (with their padding) that mixes letter cases or
// holds a digit or + or /: a long word is no base64. It returns "" and
// where to go on when a run is none.
func nextBase64Candidate(s string, i int) (string, int) {
	j := i
	lower, upperCase, other := false, false, false
loop:
	for j < len(s) {
		switch c := s[j]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upperCase = true
		case '0' <= c && c <= '9', c == '+', c == '/', c == '_', c == '-':
			other = true
		default:
			break loop
		}
		j++
	}
	k := j
	for k < len(s) && k-j < 2 && s[k] == '=' {
		k++
	}
	if j-i >= 12 && (other || lower && upperCase) {
		return s[i:k], max(k, i+1)
	}
	return "", max(k, i+1)
}

// wrappedBase64 returns the run of base64 lines that starts with the
// line s[start:end], joined without their line breaks, and where it ends;
// end is returned when no line follows.
func wrappedBase64(s string, start, end int) (string, int) {
	var b strings.Builder
	pos := end
	for {
		brk := 0
		switch {
		case strings.HasPrefix(s[pos:], "\r\n"):
			brk = 2
		case strings.HasPrefix(s[pos:], "\n"):
			brk = 1
		}
		if brk == 0 || s[pos-1] == '=' {
			break
		}
		j := pos + brk
		for j < len(s) && (isAlnumASCII(s[j]) || strings.IndexByte("+/_-=", s[j]) >= 0) {
			j++
		}
		if j == pos+brk {
			break
		}
		if b.Len() == 0 {
			b.WriteString(s[start:pos])
		}
		b.WriteString(s[pos+brk : j])
		pos = j
	}
	if b.Len() == 0 {
		return "", end
	}
	return b.String(), pos
}

var base64Encodings = []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}

// decodeBase64Text decodes a base64 token in any of its alphabets, and
// reports whether it holds printable UTF-8 text.
func (f *formReader) decodeBase64Text(tok string) (string, bool) {
	src := unsafe.Slice(unsafe.StringData(tok), len(tok)) // only read
	for _, enc := range base64Encodings {
		if n := enc.DecodedLen(len(tok)); cap(f.buf) < n {
			f.buf = make([]byte, n)
		}
		n, err := enc.Decode(f.buf[:cap(f.buf)], src)
		b := f.buf[:n]
		if err != nil || n == 0 || !utf8.Valid(b) {
			continue
		}
		printable, count := 0, 0
		for _, r := range string(b) {
			count++
			if unicode.IsPrint(r) || unicode.IsSpace(r) {
				printable++
			}
		}
		if printable*10 >= count*9 {
			return string(b), true
		}
	}
	return "", false
}

// normalizer is NFKC, then case folding, then NFD without combining
// marks.
var normalizer = transform.Chain(norm.NFKC, cases.Fold(), norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// letterSpellings spell the letters without a decomposition as ASCII,
// and every apostrophe as '.
var letterSpellings = strings.NewReplacer(
	"ø", "o", "ł", "l", "đ", "d", "ð", "d", "ß", "ss", "æ", "ae", "œ", "oe", "þ", "th", "ı", "i", "ħ", "h", "ŧ", "t", "ς", "σ",
	"’", "'", "‘", "'", "ʼ", "'", "′", "'", "`", "'", "´", "'")

// normalize is how the leak check compares text with learned values.
func normalize(s string) string {
	if isASCII(s) {
		return strings.ReplaceAll(strings.ToLower(s), "`", "'")
	}
	n, _, err := transform.String(normalizer, s)
	if err != nil {
		n = strings.ToLower(s)
	}
	return letterSpellings.Replace(n)
}

// withoutInvisible removes what does not show: format characters (the
// zero-width space, joiners, the soft hyphen, the byte-order mark) and
// bytes that are no character.
func withoutInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// standsAlone reports whether s[start:end] is a word of s: each side is
// the text's edge, or a character that is neither a letter nor a digit, or
// an underscore, or a digit against a letter, or a letter of another
// script; a word in Chinese, Japanese, Thai or Korean needs no such edge,
// and Arabic's one-letter proclitics (و ف ب ل ك, the article's ا and ل)
// may stand before a word.
func standsAlone(s string, start, end int) bool {
	first, _ := utf8.DecodeRuneInString(s[start:])
	last, _ := utf8.DecodeLastRuneInString(s[:end])
	var before, after rune = -1, -1
	if start > 0 {
		before, _ = utf8.DecodeLastRuneInString(s[:start])
	}
	if end < len(s) {
		after, _ = utf8.DecodeRuneInString(s[end:])
	}
	if !edge(after, last) {
		return false
	}
	// Digits on both sides make an id of it, not a word; so does a hash.
	digit := func(r rune) bool { return r >= '0' && r <= '9' }
	// Ids are ASCII: only a word in it can be part of one.
	if first < 0x80 && last < 0x80 &&
		((digit(before) && digit(after) && !digit(first) && !digit(last)) || (digit(before) || digit(after)) && hashLike(s, start, end)) {
		return false
	}
	if edge(before, first) {
		return true
	}
	if !unicode.Is(unicode.Arabic, first) {
		return false
	}
	prefix := []rune(s[:start])
	for n := 1; n <= 2 && n <= len(prefix); n++ {
		p := prefix[len(prefix)-n:]
		if !strings.ContainsRune("وفبلكا", p[0]) || n == 2 && !strings.ContainsRune("وفبلكا", p[1]) {
			break
		}
		if len(prefix) == n || edge(prefix[len(prefix)-n-1], p[0]) {
			return true
		}
	}
	return false
}

var hexRun = regexp.MustCompile(`[0-9a-fA-F-]{8,}`)

// hashLike reports whether s[start:end] is part of eight hexadecimal
// digits or more with a decimal digit among them.
func hashLike(s string, start, end int) bool {
	for _, m := range hexRun.FindAllStringIndex(s, -1) {
		if m[0] <= start && end <= m[1] && strings.ContainsAny(s[m[0]:m[1]], "0123456789") {
			return true
		}
	}
	return false
}

// edge reports whether the rune beside a word, c, ends it against the
// word's own rune at that side, w.
func edge(c, w rune) bool {
	if c < 0 || c == '_' {
		return true
	}
	if unicode.In(w, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) {
		return true
	}
	cLetter := unicode.IsLetter(c) || unicode.Is(unicode.Mn, c)
	cDigit, wDigit := unicode.IsDigit(c), unicode.IsDigit(w)
	switch {
	case cDigit:
		return !wDigit
	case cLetter && wDigit:
		return true
	case cLetter:
		return scriptName(c) != scriptName(w)
	}
	return true
}

func scriptName(r rune) string {
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return name
		}
	}
	return ""
}

// plainKey reports whether a key is an identifier of at most 64 ASCII
// letters, digits and underscores, starting with a letter or underscore:
// only such a key is shown as written.
func plainKey(k string) bool {
	if k == "" || len(k) > 64 || isDigitASCII(k[0]) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isAlnumASCII(c) && c != '_' {
			return false
		}
	}
	return true
}
