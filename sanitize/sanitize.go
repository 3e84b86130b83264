package sanitize

import (
	"crypto/rand"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/version"
)

// MinKeyLen is the shortest key accepted: a short key makes the fakes
// guessable from a dictionary of likely originals.
const MinKeyLen = 16

// ErrStamped is returned for a document that carries a sanitizer stamp
// already, unless Options.Force is set.
var ErrStamped = errors.New("already sanitized: the file carries a sanitizer stamp (sanitize the raw export instead, or force it)")

// Options configure a Sanitizer.
type Options struct {
	// Key derives every fake. The same key gives the same fakes in every
	// file and run. Nil means a random key: fakes agree within this
	// Sanitizer only, and the stamp says so.
	Key []byte
	// Rules name the known personal fields; nil means DefaultRules.
	Rules *Rules
	// Names are more names to hunt in free text, beyond those the rules
	// find; each part of each name is hunted as a whole word.
	Names []string
	// Force sanitizes documents that carry a stamp already.
	Force bool
	// ReportPaths counts replacements by JSON path in the Report, at the
	// cost of finding each replacement's path.
	ReportPaths bool
}

// Sanitizer replaces people, workspaces and secrets in recorded history.
// It learns the originals of every document it is given, so a directory of
// files is consistent: give it every file with Learn before the first
// Sanitize. A Sanitizer is not safe for concurrent use.
type Sanitizer struct {
	rules  *Rules
	tries  tries
	random bool
	force  bool
	// reportPaths: see Options.ReportPaths.
	reportPaths bool
	fk          *faker
	dict        dictionary
	report      Report
	learned     map[uint64]*docMeta // documents learned and not yet sanitized, by hash
	seed        maphash.Seed
}

// New returns a Sanitizer.
func New(opts Options) (*Sanitizer, error) {
	key := opts.Key
	random := key == nil
	if random {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("sanitize key: %d bytes is too short: use at least %d (e.g. openssl rand -hex 32)", len(key), MinKeyLen)
	}
	rules := opts.Rules
	if rules == nil {
		rules = DefaultRules()
	}
	s := &Sanitizer{rules: rules, tries: newTries(rules), random: random, force: opts.Force, reportPaths: opts.ReportPaths, learned: map[uint64]*docMeta{}, seed: maphash.MakeSeed()}
	s.dict.byValue = map[string]int{}
	s.fk = newFaker(key, s.dict.isOriginal)
	s.report = newReport(s.fk.fingerprint(), rules.Digest(), random)
	for _, n := range opts.Names {
		s.learnName(n, true)
	}
	return s, nil
}

// RandomKey reports whether the Sanitizer made up its key.
func (s *Sanitizer) RandomKey() bool { return s.random }

// Report returns what the Sanitizer has done so far. It holds no original
// value.
func (s *Sanitizer) Report() *Report {
	r := s.report
	r.Replaced = maps.Clone(r.Replaced)
	r.Detectors = maps.Clone(r.Detectors)
	r.Paths = maps.Clone(r.Paths)
	for p, m := range r.Paths {
		r.Paths[p] = maps.Clone(m)
	}
	r.Learned = map[Kind]int{}
	for _, e := range s.dict.list {
		r.Learned[e.kind]++
	}
	return &r
}

// Learn reads the originals a document's known fields hold, without
// rewriting it. It checks the shape of recorded history (version, surface,
// rows with seq, type and payload); Sanitize finds malformed JSON.
func (s *Sanitizer) Learn(doc []byte, file string) error {
	_, err := s.learn(doc, file)
	return err
}

// docMeta is what the rewrite needs of a learned document: each row's seq
// and type, in document order, and where the stamp goes.
type docMeta struct {
	rows  []rowMeta
	stamp span
}

type rowMeta struct {
	seq int64
	typ string
}

// learn validates a document and learns from its known fields, once per
// distinct document.
func (s *Sanitizer) learn(doc []byte, file string) (*docMeta, error) {
	sum := maphash.Bytes(s.seed, doc)
	if meta, ok := s.learned[sum]; ok {
		return meta, nil
	}
	// Whether the JSON is well formed is checked once, on the output
	// (verify); a malformed input makes a malformed output, and Sanitize
	// then says the input was at fault.
	src := view(doc)
	if !strings.HasPrefix(strings.TrimLeft(src, " \t\r\n"), "{") {
		return nil, invalid(file, "", "the top level must be a JSON object")
	}
	// The top-level fields, read in one pass that jumps over the events.
	var version, surface, exporter, identities gjson.Result
	var events string
	var docFields []rowField
	parse := func(value string, at int) gjson.Result {
		r := gjson.Parse(value)
		r.Index = at
		return r
	}
	eachField(src, 0, func(key, value string, at int) {
		switch key {
		case "version":
			version = parse(value, at)
		case "surface":
			surface = parse(value, at)
		case "events":
			events = value
		case "exporter":
			exporter = parse(value, at)
		case "identities":
			identities = parse(value, at)
		}
		if s.tries.document.kids[key] != nil {
			docFields = append(docFields, rowField{key, value})
		}
	})
	if exporter.Get("sanitizer").Exists() && !s.force {
		return nil, fmt.Errorf("%s: %w", orInput(file), ErrStamped)
	}
	switch {
	case version.Type != gjson.Number || version.Raw != "1":
		return nil, invalid(file, "version", "must be 1, got %s", orMissing(version))
	case surface.Str != "slack" && surface.Str != "web":
		return nil, invalid(file, "surface", "must be \"slack\" or \"web\", got %s", orMissing(surface))
	case !strings.HasPrefix(events, "["):
		return nil, invalid(file, "events", "must be an array, got %s", orMissing(gjson.Parse(events)))
	}
	for _, f := range docFields {
		s.learnAt(gjson.Result{}, gjson.Parse(f.value), s.tries.document.kids[f.key], false)
	}
	identities.ForEach(func(_, id gjson.Result) bool {
		s.learnTrie(id, s.tries.identities, true)
		return true
	})
	meta := &docMeta{stamp: s.stampEdit(exporter, surface)}
	var err error
	eachElement(events, 0, func(start int) (end int) {
		if err != nil {
			return skipValue(events, start)
		}
		// One pass over the row's fields: what validation needs, and the
		// fields some rule may start at.
		var seq, typ, payload string
		var fields []rowField
		isObject := events[start] == '{'
		if isObject {
			end = eachField(events, start, func(key, value string, _ int) {
				switch key {
				case "seq":
					seq = value
				case "type":
					typ = value
				case "payload":
					payload = value
				}
				if s.tries.topKeys[key] {
					fields = append(fields, rowField{key, value})
				}
			})
		} else {
			end = skipValue(events, start)
		}
		seqN, seqErr := strconv.ParseInt(seq, 10, 64)
		field := ""
		switch {
		case !isObject:
		case seqErr != nil || seqN < 0:
			field = "seq"
		case !strings.HasPrefix(typ, `"`):
			field = "type"
		case !strings.HasPrefix(payload, "{"):
			field = "payload"
		default:
			typeName := gjson.Parse(typ).Str
			meta.rows = append(meta.rows, rowMeta{seqN, strings.Clone(typeName)})
			if t := s.tries.events(typeName); t != nil {
				parent := gjson.Parse(events[start:end])
				for _, f := range fields {
					if kid := t.kids[f.key]; kid != nil {
						s.learnAt(parent, gjson.Parse(f.value), kid, false)
					}
				}
			}
			return end
		}
		err = &history.RowError{File: file, Index: len(meta.rows), Seq: -1, Field: field,
			Err: fmt.Errorf("%w: missing or of the wrong type", history.ErrInvalid)}
		return end
	})
	if err != nil {
		return nil, err
	}
	s.learned[sum] = meta
	return meta, nil
}

func invalid(file, field, format string, args ...any) error {
	return &history.FormatError{File: file, Offset: -1, Field: field,
		Err: fmt.Errorf("%w: %s", history.ErrInvalid, fmt.Sprintf(format, args...))}
}

// rowField is one top-level field of a row, raw.
type rowField struct {
	key   string
	value string
}

// learnTrie learns the values the rules of t name in v, visiting each
// field once however many rules share its path.
func (s *Sanitizer) learnTrie(v gjson.Result, t *ruleTrie, identity bool) {
	if t == nil || len(t.kids) == 0 {
		return
	}
	switch {
	case t.kids["#"] != nil && v.IsArray():
		kid := t.kids["#"]
		v.ForEach(func(_, item gjson.Result) bool {
			s.learnAt(v, item, kid, identity)
			return true
		})
	case v.IsObject():
		// One pass over the object's fields, jumping over the long ones.
		eachField(v.Raw, 0, func(key, value string, _ int) {
			if kid := t.kids[key]; kid != nil {
				s.learnAt(v, gjson.Parse(value), kid, identity)
			}
		})
	}
}

// learnAt learns the value at one trie node, whose parent object is parent.
func (s *Sanitizer) learnAt(parent, v gjson.Result, t *ruleTrie, identity bool) {
	for _, r := range t.rules {
		if r.UnlessBot && parent.Get("isBot").Bool() {
			continue
		}
		if v.IsArray() {
			v.ForEach(func(_, item gjson.Result) bool {
				if item.Type == gjson.String {
					s.learnValue(r.Kind, item.Str, identity)
				}
				return true
			})
		} else if v.Type == gjson.String {
			s.learnValue(r.Kind, v.Str, identity)
		}
	}
	s.learnTrie(v, t, identity)
}

// learnValue records an original of a rule kind under the kind of value it
// is.
func (s *Sanitizer) learnValue(k RuleKind, v string, identity bool) {
	v = strings.TrimSpace(v)
	switch k {
	case ruleUserRef:
		switch {
		case isSlackID(v):
			s.dict.add(KindSlackID, v)
		case strings.HasPrefix(v, "dashboard:"):
			s.dict.add(KindDashboardID, v)
		case len(findEmails(v)) == 1:
			s.learnValue(RuleKind(KindEmail), v, identity)
		}
	case ruleUserName:
		if strings.Contains(v, " ") {
			s.learnName(v, identity)
		} else {
			s.dict.add(KindHandle, v)
		}
	case ruleConversationID:
		if parts := strings.Split(v, ":"); len(parts) == 3 && parts[0] == "slack" && isSlackID(parts[1]) {
			s.dict.add(KindSlackID, parts[1])
		} else if m := localIDRe.FindStringSubmatch(v); m != nil {
			s.dict.add(KindHexID, m[1])
		}
	case RuleKind(KindName):
		s.learnName(v, identity)
	case RuleKind(KindEmail):
		if e := findEmails(v); len(e) == 1 && e[0] == [2]int{0, len(v)} {
			s.dict.add(KindEmail, strings.ToLower(v))
		}
	case RuleKind(KindSlackID):
		if isSlackID(v) {
			s.dict.add(KindSlackID, v)
		}
	default:
		s.dict.add(Kind(k), v)
	}
}

// learnName records a full name and, for names from identity rows and the
// names dictionary, its first and last parts as words of their own.
func (s *Sanitizer) learnName(v string, parts bool) {
	v = strings.Join(strings.Fields(v), " ")
	s.dict.add(KindName, v)
	if f := strings.Fields(v); parts && len(f) > 1 {
		s.dict.add(KindFirstName, f[0])
		s.dict.add(KindLastName, f[len(f)-1])
	}
}

// Sanitize returns the document with every learned value and every
// detected personal value and secret replaced, stamped. It learns the
// document first. It then checks the result for every original it knows
// and every secret shape, and returns a *LeakError (matching ErrLeak) and
// no output if any survived.
func (s *Sanitizer) Sanitize(doc []byte, file string) ([]byte, error) {
	meta, err := s.learn(doc, file)
	if err != nil {
		return nil, err
	}
	delete(s.learned, maphash.Bytes(s.seed, doc))
	s.dict.build(s.fk)
	src := view(doc)
	out, kept := s.rewrite(src, meta.stamp)
	if hits := s.verify(view(out)); len(hits) > 0 {
		if !gjson.Valid(src) {
			return nil, invalid(file, "", "malformed JSON")
		}
		return nil, &LeakError{File: file, Hits: hits}
	}
	s.report.add(s.counts(src, kept), len(doc), len(out), len(meta.rows))
	return out, nil
}

// view reads b as a string without copying it. The sanitizer only reads
// its input, and copies whatever it keeps (learned values, row types), so
// the caller's bytes are never held beyond a call.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rewrite replaces, in one pass over the raw bytes of a document, every
// learned value in every form it takes and everything the detectors find.
func (s *Sanitizer) rewrite(src string, stamp span) ([]byte, []span) {
	d, fk := &s.dict, s.fk
	sc := d.matcher.scan(src)
	spans := secretSpans(src, sc.trig, fk, nil)
	nSecrets := len(spans)
	for _, m := range sc.learned {
		spans = append(spans, d.span(src, m, fk))
	}
	spans = markupSpans(src, sc.pipe, fk, spans)
	spans = emailSpans(src, sc.at, fk, spans)
	for _, id := range sc.ids {
		spans = append(spans, span{id[0], id[1], fk.fake(KindSlackID, src[id[0]:id[1]]), KindSlackID, "slack-id"})
	}
	spans = workspaceSpans(src, sc.trig[trigWorkspace], fk, spans)
	spans = idSpans(src, sc.trig, fk, spans)
	spans = ipSpans(src, sc.ip, fk, spans)
	spans = phoneSpans(src, sc.phone, fk, spans)
	kept := resolve(src, spans, nSecrets)
	// The stamp goes in last: an old stamp is replaced whole.
	kept = slices.DeleteFunc(kept, func(sp span) bool { return sp.start < stamp.end && stamp.start < sp.end })
	at, _ := slices.BinarySearchFunc(kept, stamp.start, func(sp span, pos int) int { return sp.start - pos })
	edits := slices.Insert(slices.Clone(kept), at, stamp)
	out := make([]byte, 0, len(src)+len(src)/32+len(stamp.repl))
	pos := 0
	for _, sp := range edits {
		out = append(out, src[pos:sp.start]...)
		out = append(out, sp.repl...)
		pos = sp.end
	}
	return append(out, src[pos:]...), kept
}

// resolve picks the spans to apply, in order: the secrets first, then the
// others from the left, the earlier found winning where two start at one
// place. No span may begin inside an escape (see splitsEscape), and a span
// that would change nothing is dropped.
func resolve(src string, spans []span, nSecrets int) []span {
	valid := func(sp span) bool {
		return sp.start < sp.end && !splitsEscape(src, sp.start) && src[sp.start:sp.end] != sp.repl
	}
	byStart := func(a, b span) int { return a.start - b.start }
	secrets, others := spans[:nSecrets], spans[nSecrets:]
	slices.SortStableFunc(secrets, byStart)
	slices.SortStableFunc(others, byStart)
	var kept, out []span
	end := 0
	for _, sp := range secrets {
		if valid(sp) && sp.start >= end {
			kept = append(kept, sp)
			end = sp.end
		}
	}
	si, end := 0, 0
	for _, sp := range others {
		for si < len(kept) && kept[si].end <= sp.start {
			si++
		}
		if !valid(sp) || sp.start < end || si < len(kept) && kept[si].start < sp.end {
			continue
		}
		out = append(out, sp)
		end = sp.end
	}
	out = append(out, kept...)
	slices.SortStableFunc(out, byStart)
	return out
}

// splitsEscape reports whether raw bytes at i may be the second character
// of an escape such as \n: after a backslash, one of the letters that
// follow one. After \\ the letter is either literal (in a string) or an
// escape (in a document nested in a string); the raw bytes cannot say
// which, so such a place is never rewritten, and the leak check decides.
func splitsEscape(s string, i int) bool {
	return i > 0 && s[i-1] == '\\' && strings.IndexByte(`ntrbfu"\\/`, s[i]) >= 0
}

// counts turns the replacements of a document into report counts; with
// ReportPaths, each with the JSON path it was at.
func (s *Sanitizer) counts(src string, kept []span) []countedSpan {
	c := make([]countedSpan, len(kept))
	for i, sp := range kept {
		c[i] = countedSpan{kind: sp.kind, detector: sp.detector}
		if s.reportPaths {
			c[i].path = collapse(pathAt(src, sp.start))
		}
	}
	return c
}

// stampEdit says where the stamp goes: exporter.sanitizer records that the
// document was sanitized, with which key (its fingerprint) and rules. It
// holds no time, so that the same input and key give the same bytes. An
// old stamp (with Force) is replaced; else the stamp is the first key of
// exporter, or a new exporter after surface.
func (s *Sanitizer) stampEdit(exporter, surface gjson.Result) span {
	st := fmt.Sprintf(`{"tool": "agentvcr-sanitize", "version": %q, "keyFingerprint": %q, "randomKey": %t, "rulesDigest": %q}`,
		version.String(), s.fk.fingerprint(), s.random, s.rules.Digest())
	if old := exporter.Get("sanitizer"); old.Exists() {
		start := old.Index // gjson makes it absolute
		return span{start: start, end: start + len(old.Raw), repl: st, kind: "stamp"}
	}
	if exporter.IsObject() {
		open := exporter.Index + strings.IndexByte(exporter.Raw, '{') + 1
		sep := ","
		if len(exporter.Map()) == 0 {
			sep = ""
		}
		return span{start: open, end: open, repl: "\n    \"sanitizer\": " + st + sep, kind: "stamp"}
	}
	at := surface.Index + len(surface.Raw)
	return span{start: at, end: at, repl: ",\n  \"exporter\": {\"sanitizer\": " + st + "}", kind: "stamp"}
}

func orMissing(v gjson.Result) string {
	if !v.Exists() {
		return "nothing"
	}
	if len(v.Raw) > 20 {
		return v.Raw[:20] + "..."
	}
	return v.Raw
}

func orInput(file string) string {
	if file == "" {
		return "<input>"
	}
	return file
}
