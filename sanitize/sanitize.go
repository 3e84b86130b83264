package sanitize

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/internal/version"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
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
	// People are every person a database knows (recorder export
	// --people), learned before any document.
	People *People
	// NoDetectNames turns the free-text name detector off: only names
	// from rules, People and Names are then hunted, and the leak check
	// looks for no others. The detector is on by default.
	NoDetectNames bool
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
	keys        map[string]string  // object keys as reports show them
	leak        *leakcheck.Checker // the leak check, with entries of dict added (see checker)
	// issuedBy are the fakes of kinds the leak check asks about, by
	// their letters and digits, as of issuedAt fakes given out.
	issuedBy    map[Kind]map[string]bool
	issuedAt    int
	notSecrets  *regexp.Regexp    // rules.NotSecrets
	memo        map[string][]edit // textEdits of texts up to memoMaxText, as of memoBuilt entries
	memoBuilt   int
	memoBytes   int                     // of the texts in memo
	seen        map[memberText]struct{} // texts learnText has learned from
	seenBytes   int
	namedKeys   map[string]bool // see named
	detectNames bool            // !Options.NoDetectNames
	notNames    []string        // rules.NotNames, lower case
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
	s := &Sanitizer{rules: rules, tries: newTries(rules), random: random, force: opts.Force, reportPaths: opts.ReportPaths,
		learned: map[uint64]*docMeta{}, seed: maphash.MakeSeed(), keys: map[string]string{}, notSecrets: rules.notSecrets(), memo: map[string][]edit{}, namedKeys: map[string]bool{}, seen: map[memberText]struct{}{}}
	s.detectNames = !opts.NoDetectNames
	for _, n := range rules.NotNames {
		s.notNames = append(s.notNames, strings.ToLower(strings.Join(strings.Fields(n), " ")))
	}
	s.dict.byValue = map[string]int{}
	s.dict.folded = map[string]struct{}{}
	s.fk = newFaker(key, s.dict.isOriginal)
	s.report = newReport(s.fk.fingerprint(), rules.Digest(), random)
	for _, n := range opts.Names {
		s.learnName(n, true)
	}
	if opts.People != nil {
		if err := s.LearnPeople(opts.People); err != nil {
			return nil, err
		}
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
	r.NamesDetected = maps.Clone(r.NamesDetected)
	for p, m := range r.Paths {
		r.Paths[p] = maps.Clone(m)
	}
	r.Learned = map[Kind]int{}
	for _, e := range s.dict.list {
		r.Learned[e.kind]++
	}
	return &r
}

// Sanitize returns the document with every learned value and every
// detected personal value and secret replaced, stamped. It learns the
// document first. A verifier that shares no code with the rewrite then
// reads the result (package leakcheck); if it finds an original or a secret,
// or a document nested in a string that no longer parses, Sanitize
// returns a *LeakError (matching ErrLeak) and no output.
func (s *Sanitizer) Sanitize(doc []byte, file string) ([]byte, error) {
	meta, err := s.learn(doc, file)
	if err != nil {
		return nil, err
	}
	delete(s.learned, maphash.Bytes(s.seed, doc))
	s.dict.build(s.fk)
	src := asString(doc)
	edits, err := s.rewrite(src, meta)
	if err != nil {
		return nil, invalid(file, "", "malformed JSON: %v", err)
	}
	out := splice(src, edits)
	if hits := s.verify(src, out); len(hits) > 0 {
		if hits[0].Kind == "invalid JSON" && !json.Valid(doc) {
			return nil, invalid(file, "", "malformed JSON (a control character in a string, or nesting too deep)")
		}
		return nil, &LeakError{File: file, Hits: hits}
	}
	s.report.add(edits, len(doc), len(out), len(meta.rows))
	return out, nil
}

// asString reads b as a string without copying it. The sanitizer only reads
// its input, and copies whatever it keeps (learned values, row types), so
// the caller's bytes are never held beyond a call.
func asString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// rowFields are the fields of an event row that are the log's own and
// hold nothing personal: the rewrite leaves them as they are.
var rowFields = map[string]bool{"seq": true, "createdAtMs": true, "historyVersion": true, "schemaVersion": true, "type": true}

// rewrite returns the edits of a document: every replacement the walk
// finds, and the stamp.
func (s *Sanitizer) rewrite(src string, meta *docMeta) ([]edit, error) {
	w := &walker{
		leaf: func(w *walker, text string, number, isKey bool) []edit {
			var edits []edit
			switch last := len(w.path) - 1; {
			case number:
				edits = s.numberEdits(text)
			case !isKey && last >= 0 && w.path[last].index < 0 && !w.path[last].nested && s.named(w.path[last].key):
				edits = s.valueEdits(w.path[last].key, text)
			default:
				edits = s.textEdits(text)
			}
			if s.reportPaths && len(edits) > 0 {
				where := s.pathOf(w.path, meta)
				edits = slices.Clone(edits) // textEdits may share them
				for i := range edits {
					edits[i].where = where
				}
			}
			return edits
		},
		skip: func(w *walker, key string) bool {
			return len(w.path) == 3 && w.path[0].key == "events" && w.path[1].index >= 0 && rowFields[key]
		},
	}
	edits, err := w.doc(src)
	if err != nil {
		return nil, err
	}
	// The stamp goes in last: an old stamp is replaced whole.
	stamp := meta.stamp
	edits = slices.DeleteFunc(edits, func(e edit) bool { return e.start < stamp.end && stamp.start < e.end })
	at, _ := slices.BinarySearchFunc(edits, stamp.start, func(e edit, pos int) int { return e.start - pos })
	return slices.Insert(edits, at, stamp), nil
}

// named reports whether an object key holds a keyword of the secret
// rules, so that its value may be a secret only the key tells.
func (s *Sanitizer) named(key string) bool {
	n, ok := s.namedKeys[key]
	if !ok {
		n = !slices.Contains(s.rules.IDFields, key) && secrets.Default().Named(key)
		if len(s.namedKeys) < 1<<16 {
			s.namedKeys[strings.Clone(key)] = n
		}
	}
	return n
}

// valueEdits returns the replacements in the value of a key that names a
// secret: what textEdits finds, and the secrets the key tells of
// ({"access_token": "..."}), the longest winning.
func (s *Sanitizer) valueEdits(key, text string) []edit {
	edits := s.textEdits(text)
	found := secrets.Default().Assignment(key, text)
	if len(found) == 0 {
		return edits
	}
	spans := make([]span, 0, len(edits)+len(found))
	for _, e := range edits {
		spans = append(spans, span{e.start, e.end, e.repl, e.kind, e.detector})
	}
	for _, m := range found {
		if !notSecret(s.notSecrets, text, m.Start, m.End) {
			spans = append(spans, span{m.Start, m.End, s.fk.secret(m.Rule, text[m.Start:m.End]), KindSecret, "secret:" + m.Rule})
		}
	}
	return resolve(text, spans)
}

// splice applies edits, in order, to src.
func splice(src string, edits []edit) []byte {
	grow := 0
	for _, e := range edits {
		grow += len(e.repl) - (e.end - e.start)
	}
	out := make([]byte, 0, len(src)+max(grow, 0))
	pos := 0
	for _, e := range edits {
		out = append(out, src[pos:e.start]...)
		out = append(out, e.repl...)
		pos = e.end
	}
	return append(out, src[pos:]...)
}

// pathOf names where a walk is for the report: the row's type, then the
// path inside the row, > where a document nested in a string starts,
// array indexes as [#], and keys only as safeKey lets them through.
func (s *Sanitizer) pathOf(path []pathSeg, meta *docMeta) string {
	var b strings.Builder
	sep := false // a key written next needs a dot before it
	for i, seg := range path {
		switch {
		case i == 0 && seg.key == "events" && len(path) > 1:
		case i == 1 && path[0].key == "events" && seg.index >= 0:
			if seg.index < len(meta.rows) && s.safeKey(meta.rows[seg.index].typ) == meta.rows[seg.index].typ {
				b.WriteString(meta.rows[seg.index].typ)
			} else {
				b.WriteString("events[#]")
			}
			sep = true
		case seg.nested:
			b.WriteByte('>')
			sep = false
		case seg.index >= 0:
			b.WriteString("[#]")
			sep = true
		default:
			if sep {
				b.WriteByte('.')
			}
			b.WriteString(s.safeKey(seg.key))
			sep = true
		}
	}
	return b.String()
}

// safeKey is how a report shows an object key: as written if it is a
// plain identifier that holds nothing the sanitizer replaces, else a
// digest of it, so a key that is an email or a token never reaches a
// report.
func (s *Sanitizer) safeKey(key string) string {
	if k, ok := s.keys[key]; ok {
		return k
	}
	k := key
	if !plainKey(key) || len(s.textEdits(key)) > 0 || !s.checker().Clean(key) {
		k = "<key " + s.fk.digest("key", key) + ">"
	}
	s.keys[key] = k
	return k
}

// plainKey reports whether a key is an identifier of at most 64 ASCII
// letters, digits and underscores, starting with a letter or underscore.
func plainKey(k string) bool {
	if k == "" || len(k) > 64 || isDigit(k[0]) {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !isAlnumByte(c) && c != '_' {
			return false
		}
	}
	return true
}

// stampEdit says where the stamp goes: exporter.sanitizer records that the
// document was sanitized, with which key (its fingerprint) and rules. It
// holds no time, so that the same input and key give the same bytes. An
// old stamp (with Force) is replaced; else the stamp is the first key of
// exporter, or a new exporter after surface.
func (s *Sanitizer) stampEdit(exporter, surface gjson.Result) edit {
	st := fmt.Sprintf(`{"tool": "agentvcr-sanitize", "version": %q, "keyFingerprint": %q, "randomKey": %t, "rulesDigest": %q%s}`,
		version.String(), s.fk.fingerprint(), s.random, s.rules.Digest(), s.stampNames())
	if old := exporter.Get("sanitizer"); old.Exists() {
		start := old.Index // gjson makes it absolute
		return edit{start: start, end: start + len(old.Raw), repl: st, kind: "stamp"}
	}
	if exporter.IsObject() {
		open := exporter.Index + strings.IndexByte(exporter.Raw, '{') + 1
		sep := ","
		if len(exporter.Map()) == 0 {
			sep = ""
		}
		return edit{start: open, end: open, repl: "\n    \"sanitizer\": " + st + sep, kind: "stamp"}
	}
	at := surface.Index + len(surface.Raw)
	return edit{start: at, end: at, repl: ",\n  \"exporter\": {\"sanitizer\": " + st + "}", kind: "stamp"}
}

// orMissing names the type of a value, for an error: never the value,
// which may be personal.
func orMissing(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number && len(v.Raw) <= 6:
		return v.Raw
	case v.Type == gjson.Number:
		return "a number"
	case v.IsObject():
		return "an object"
	case v.IsArray():
		return "an array"
	}
	return v.Type.String()
}

func orInput(file string) string {
	if file == "" {
		return "<input>"
	}
	return file
}
