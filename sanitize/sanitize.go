package sanitize

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

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
}

// Sanitizer replaces people, workspaces and secrets in recorded history.
// It learns the originals of every document it is given, so a directory of
// files is consistent: give it every file with Learn before the first
// Sanitize. A Sanitizer is not safe for concurrent use.
type Sanitizer struct {
	rules  *Rules
	random bool
	force  bool
	fk     *faker
	dict   dictionary
	report Report
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
	s := &Sanitizer{rules: rules, random: random, force: opts.Force}
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
// rewriting it. It validates the document as recorded history.
func (s *Sanitizer) Learn(doc []byte, file string) error {
	_, err := s.learn(string(doc), file)
	return err
}

func (s *Sanitizer) learn(src, file string) (gjson.Result, error) {
	root, err := validate(src, file)
	if err != nil {
		return root, err
	}
	if root.Get("exporter.sanitizer").Exists() && !s.force {
		return root, fmt.Errorf("%s: %w", orInput(file), ErrStamped)
	}
	s.learnRules(root, s.rules.Document, false)
	root.Get("identities").ForEach(func(_, id gjson.Result) bool {
		s.learnRules(id, s.rules.Identities, true)
		return true
	})
	root.Get("events").ForEach(func(_, row gjson.Result) bool {
		s.learnRules(row, s.rules.Events["*"], false)
		s.learnRules(row, s.rules.Events[row.Get("type").String()], false)
		return true
	})
	return root, nil
}

func (s *Sanitizer) learnRules(obj gjson.Result, rules []Rule, identity bool) {
	for _, r := range rules {
		if r.UnlessBot {
			parent := ""
			if i := strings.LastIndexByte(r.Path, '.'); i >= 0 {
				parent = r.Path[:i+1]
			}
			if obj.Get(parent + "isBot").Bool() {
				continue
			}
		}
		v := obj.Get(r.Path)
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
	src := string(doc)
	if _, err := s.learn(src, file); err != nil {
		return nil, err
	}
	s.dict.build(s.fk)
	rw := &rewriter{s: s}
	w := &walker{visit: rw.visit}
	out := w.document(src)
	out, err := s.stamp(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", orInput(file), err)
	}
	if hits := s.verify(out); len(hits) > 0 {
		return nil, &LeakError{File: file, Hits: hits}
	}
	s.report.add(rw.counts, len(doc), len(out), int(gjson.Get(src, "events.#").Int()))
	return []byte(out), nil
}

// rewriter is the walker's visitor while sanitizing.
type rewriter struct {
	s      *Sanitizer
	spans  []span
	counts counts
}

func (rw *rewriter) visit(w *walker, str string) []edit {
	s := rw.s
	spans := secretSpans(str, s.fk, rw.spans[:0])
	nSecrets := len(spans)
	for _, m := range s.dict.rewrite.find(str) {
		spans = append(spans, s.dict.span(str, m, s.fk))
	}
	spans = markupSpans(str, s.fk, spans)
	if strings.IndexByte(str, '@') >= 0 {
		spans = emailSpans(str, s.fk, spans)
	}
	spans = slackIDSpans(str, s.fk, spans)
	spans = shapeSpans(str, s.fk, spans)
	rw.spans = spans
	if len(spans) == 0 {
		return nil
	}
	var edits []edit
	for _, sp := range resolve(spans, nSecrets) {
		if str[sp.start:sp.end] == sp.repl {
			continue
		}
		edits = append(edits, edit{sp.start, sp.end, sp.repl})
		rw.counts.add(sp, w.where(true))
	}
	return edits
}

// resolve picks the spans to apply: the secrets first, then the others
// from the left, the first found winning where they overlap.
func resolve(spans []span, nSecrets int) []span {
	var kept []span
	overlaps := func(sp span) bool {
		for _, k := range kept {
			if sp.start < k.end && k.start < sp.end {
				return true
			}
		}
		return false
	}
	for _, sp := range spans[:nSecrets] {
		if !overlaps(sp) {
			kept = append(kept, sp)
		}
	}
	rest := slices.Clone(spans[nSecrets:])
	slices.SortStableFunc(rest, func(a, b span) int { return a.start - b.start })
	for _, sp := range rest {
		if !overlaps(sp) {
			kept = append(kept, sp)
		}
	}
	slices.SortFunc(kept, func(a, b span) int { return a.start - b.start })
	return kept
}

// stamp records in exporter.sanitizer that the document was sanitized, with
// which key (its fingerprint) and rules. It holds no time, so that the same
// input and key give the same bytes.
func (s *Sanitizer) stamp(doc string) (string, error) {
	st := fmt.Sprintf(`{"tool": "agentvcr-sanitize", "version": %q, "keyFingerprint": %q, "randomKey": %t, "rulesDigest": %q}`,
		version.String(), s.fk.fingerprint(), s.random, s.rules.Digest())
	root := gjson.Parse(doc)
	if old := root.Get("exporter.sanitizer"); old.Exists() {
		return doc[:old.Index] + st + doc[old.Index+len(old.Raw):], nil
	}
	if ex := root.Get("exporter"); ex.IsObject() {
		open := ex.Index + strings.IndexByte(ex.Raw, '{') + 1
		sep := ","
		if len(ex.Map()) == 0 {
			sep = ""
		}
		return doc[:open] + "\n    \"sanitizer\": " + st + sep + doc[open:], nil
	}
	surface := root.Get("surface")
	if !surface.Exists() {
		return "", errors.New("no surface to stamp after")
	}
	at := surface.Index + len(surface.Raw)
	return doc[:at] + ",\n  \"exporter\": {\"sanitizer\": " + st + "}" + doc[at:], nil
}

// validate checks that src is recorded history v1 in the ways the
// sanitizer relies on, and that its output will load.
func validate(src, file string) (gjson.Result, error) {
	bad := func(field, format string, args ...any) error {
		return &history.FormatError{File: file, Offset: -1, Field: field,
			Err: fmt.Errorf("%w: %s", history.ErrInvalid, fmt.Sprintf(format, args...))}
	}
	if !gjson.Valid(src) {
		return gjson.Result{}, bad("", "malformed JSON")
	}
	root := gjson.Parse(src)
	if !root.IsObject() {
		return root, bad("", "the top level must be a JSON object")
	}
	if v := root.Get("version"); v.Type != gjson.Number || v.Raw != "1" {
		return root, bad("version", "must be 1, got %s", orMissing(v))
	}
	if v := root.Get("surface"); v.Str != "slack" && v.Str != "web" {
		return root, bad("surface", "must be \"slack\" or \"web\", got %s", orMissing(v))
	}
	events := root.Get("events")
	if !events.IsArray() {
		return root, bad("events", "must be an array, got %s", orMissing(events))
	}
	var err error
	i := 0
	events.ForEach(func(_, row gjson.Result) bool {
		field := ""
		switch {
		case !row.IsObject():
			field = ""
		case row.Get("seq").Type != gjson.Number:
			field = "seq"
		case row.Get("type").Type != gjson.String:
			field = "type"
		case !row.Get("payload").IsObject():
			field = "payload"
		default:
			i++
			return true
		}
		err = &history.RowError{File: file, Index: i, Seq: -1, Field: field,
			Err: fmt.Errorf("%w: missing or of the wrong type", history.ErrInvalid)}
		return false
	})
	return root, err
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
