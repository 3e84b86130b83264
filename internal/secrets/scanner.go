package secrets

import (
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// Scanner finds credentials in text with gitleaks' default rule set (the
// rules of github.com/zricethezav/gitleaks/v8, read from its embedded
// configuration) and agentvcr's own shapes: credentials in URLs, and the
// token families of Rules. It is what the sanitizer and sanitize check run
// on every decoded string; a Scanner is safe for concurrent use.
//
// gitleaks' own detector costs several microseconds per call and scans a
// whole fragment with every rule whose keyword occurs in it, which on
// prose (keywords such as "key", "token", "ey" and "s." are everywhere) is
// about 2 MB/s. The Scanner finds the keywords once, and runs a rule's
// expression only where a cheap test that every match passes says a match
// may stand: for the rules written as identifier, operator, value (most of
// the set, generic-api-key among them) that an operator and a long enough
// value follow the keyword; for the few other rules with common keywords,
// that the characters after the keyword have the token's shape. Entropy
// thresholds and allowlists are gitleaks'. Tests compare its findings with
// gitleaks' detector on samples of every rule.
type Scanner struct {
	rules    []*scanRule
	gitleaks int // rules[:gitleaks] are gitleaks', the rest own's
	trie     *ahocorasick.Trie
	shortest int              // no rule matches a text shorter
	byWord   map[string][]int // lower-case keyword -> rules
	allow    []*config.Allowlist
}

// scanRule is one rule, ready to run.
type scanRule struct {
	id       string
	re       *regexp.Regexp
	group    int // the capture group holding the secret; 0: the first non-empty group, or the match
	entropy  float64
	allow    []*config.Allowlist
	keywords []string // lower case
	// exact is set for agentvcr's own rules, whose keywords are case
	// sensitive: AKIA is a keyword, Asia is not.
	exact bool
	// identifier is set for the rules of shape identifier, operator,
	// value: minValue is the shortest value they match, and named holds
	// the keywords that stand in the identifier (a keyword of the value,
	// such as NRII- of a New Relic key, says nothing of an operator after
	// it).
	identifier bool
	minValue   int
	named      map[string]bool
	// anchored is the expression without its leading [\w.-]{0,50}?,
	// anchored at the identifier, and ident the identifier alone: cheap to
	// try at a few places, where the whole expression costs a scan of its
	// window.
	anchored, ident *regexp.Regexp
	// shape, when set, says whether a match may stand at a keyword found
	// at text[start:end]; a rule without one runs on the whole text once
	// a keyword is present, as gitleaks does.
	shape func(text, lower string, start, end int) bool
}

// Default returns the scanner of gitleaks' default rules and agentvcr's,
// built once.
func Default() *Scanner { return defaultScanner() }

var defaultScanner = sync.OnceValue(func() *Scanner {
	s, err := newScanner()
	if err != nil {
		panic("secrets: gitleaks' embedded configuration: " + err.Error()) // embedded and tested
	}
	return s
})

// RuleIDs returns the names of the scanner's rules.
func (s *Scanner) RuleIDs() []string {
	ids := make([]string, len(s.rules))
	for i, r := range s.rules {
		ids[i] = r.id
	}
	return ids
}

func newScanner() (*Scanner, error) {
	// A viper of its own: gitleaks' helper uses the package-global one.
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, err
	}
	s := &Scanner{byWord: map[string][]int{}, allow: cfg.Allowlists}
	for _, id := range cfg.OrderedRules {
		r := cfg.Rules[id]
		if r.Regex == nil {
			continue // a rule on file paths only
		}
		sr := &scanRule{id: r.RuleID, re: r.Regex, group: r.SecretGroup, entropy: r.Entropy, allow: r.Allowlists}
		for _, k := range r.Keywords {
			sr.keywords = append(sr.keywords, strings.ToLower(k))
		}
		sr.identifier, sr.minValue, sr.named, sr.anchored, sr.ident = identifierShape(r.Regex.String(), sr.keywords)
		sr.shape = tokenShapes[r.RuleID]
		s.rules = append(s.rules, sr)
	}
	s.gitleaks = len(s.rules)
	for _, r := range own() {
		s.rules = append(s.rules, &scanRule{id: r.Name, re: r.Re, keywords: lowerAll(r.Keywords), group: r.group, exact: true, shape: tokenShapes[r.Name]})
	}
	var words []string
	for i, r := range s.rules {
		for _, k := range r.keywords {
			if len(s.byWord[k]) == 0 {
				words = append(words, k)
			}
			if !slices.Contains(s.byWord[k], i) {
				s.byWord[k] = append(s.byWord[k], i)
			}
		}
	}
	s.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	s.shortest = math.MaxInt
	for _, r := range s.rules {
		re, err := syntax.Parse(r.re.String(), syntax.Perl)
		if err != nil {
			return nil, err
		}
		s.shortest = min(s.shortest, minLen(re))
	}
	return s, nil
}

func lowerAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ToLower(w)
	}
	return out
}

// operatorShape is the part of gitleaks' generated "identifier, operator,
// value" expressions between the identifier and the value.
const operatorShape = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(`

// identifierShape reports whether an expression is one of gitleaks'
// generated identifier, operator, value expressions, the shortest value it
// matches, which of the keywords stand in its identifier, and the
// expression anchored at the identifier.
func identifierShape(expr string, keywords []string) (bool, int, map[string]bool, *regexp.Regexp, *regexp.Regexp) {
	const insensitive, sensitive = `(?i)[\w.-]{0,50}?(?:`, `[\w.-]{0,50}?(?i:`
	if !strings.HasPrefix(expr, insensitive) && !strings.HasPrefix(expr, sensitive) {
		return false, 0, nil, nil, nil
	}
	at := strings.Index(expr, operatorShape)
	if at < 0 || strings.Count(expr, operatorShape) != 1 {
		return false, 0, nil, nil, nil
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op == syntax.OpAlternate {
		return false, 0, nil, nil, nil
	}
	var value *syntax.Regexp
	var find func(r *syntax.Regexp)
	find = func(r *syntax.Regexp) {
		if value != nil {
			return
		}
		if r.Op == syntax.OpCapture && r.Cap == 1 {
			value = r
			return
		}
		for _, sub := range r.Sub {
			find(sub)
		}
	}
	find(re)
	if value == nil {
		return false, 0, nil, nil, nil
	}
	// The keywords that stand in the identifiers, when these are plain
	// words: in one such as MailchimpSDK.initialize the dot stands for
	// any character, and a keyword says nothing of what follows it.
	ident := expr[strings.Index(expr, "?(?")+3 : at]
	ident = strings.TrimPrefix(strings.TrimPrefix(ident, ":"), "i:")
	ident = strings.TrimSuffix(ident, ")")
	named := map[string]bool{}
	var anchored, identRe *regexp.Regexp
	if plainIdentifier(ident) {
		re := regexp.MustCompile("(?i)(?:" + ident + ")")
		identRe = regexp.MustCompile("^(?i)(?:" + ident + ")")
		for _, k := range keywords {
			// The keyword holds an identifier: where it stands, what
			// follows it is the rest of the assignment.
			if re.MatchString(k) {
				named[k] = true
			}
		}
		if strings.HasPrefix(expr, insensitive) {
			anchored = regexp.MustCompile(`^(?i)(?:` + ident + `)` + expr[at:])
		} else {
			anchored = regexp.MustCompile(`^(?i:` + ident + `)` + expr[at:])
		}
	}
	return true, minLen(value), named, anchored, identRe
}

// plainIdentifier reports whether every text the expression of an
// identifier matches is at most 40 characters of words, dots, dashes and
// the operator, quote and space characters mayAssign steps over.
func plainIdentifier(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return false
	}
	allowed := func(r rune) bool {
		return r < 0x80 && (isIdentChar(byte(r)) || isOperator(byte(r)) || isSpace(byte(r)) || r == '\'' || r == '"')
	}
	var plain func(r *syntax.Regexp) bool
	plain = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			for _, c := range r.Rune {
				if !allowed(c) {
					return false
				}
			}
			return true
		case syntax.OpCharClass:
			for i := 0; i+1 < len(r.Rune); i += 2 {
				for c := r.Rune[i]; c <= r.Rune[i+1]; c++ {
					if !allowed(c) {
						return false
					}
				}
			}
			return true
		case syntax.OpConcat, syntax.OpAlternate, syntax.OpCapture, syntax.OpQuest:
			for _, sub := range r.Sub {
				if !plain(sub) {
					return false
				}
			}
			return true
		case syntax.OpRepeat:
			return r.Max >= 0 && plain(r.Sub[0])
		case syntax.OpEmptyMatch:
			return true
		}
		return false
	}
	return plain(re) && maxLen(re) <= 40
}

// maxLen is the length in characters of the longest text r matches, or
// more than 1<<20 when there is no bound.
func maxLen(r *syntax.Regexp) int {
	const unbounded = 1 << 21
	switch r.Op {
	case syntax.OpLiteral:
		return len(r.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(r.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range r.Sub {
			n = min(n+maxLen(sub), unbounded)
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, sub := range r.Sub {
			n = max(n, maxLen(sub))
		}
		return n
	case syntax.OpRepeat:
		if r.Max < 0 {
			return unbounded
		}
		return min(r.Max*maxLen(r.Sub[0]), unbounded)
	case syntax.OpStar, syntax.OpPlus:
		return unbounded
	}
	return 0
}

// minLen is the length in bytes of the shortest text r matches, counting
// each character as one.
func minLen(r *syntax.Regexp) int {
	switch r.Op {
	case syntax.OpLiteral:
		return len(r.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture:
		return minLen(r.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range r.Sub {
			n += minLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := math.MaxInt
		for _, sub := range r.Sub {
			n = min(n, minLen(sub))
		}
		return n
	case syntax.OpPlus:
		return minLen(r.Sub[0])
	case syntax.OpRepeat:
		return r.Min * minLen(r.Sub[0])
	}
	return 0 // star, quest, empty and assertions
}

// tokenShapes are the tests for the rules whose keywords are common in
// prose ("ey" of they, "s." of this., "sk" of ask, "asia", "sg." of msg.):
// the characters after the keyword must have the token's shape. Each is
// implied by the rule's expression, quoted beside it.
var tokenShapes = map[string]func(text, lower string, start, end int) bool{
	// SK[0-9a-fA-F]{32}
	"twilio-api-key": func(t, _ string, start, _ int) bool {
		return strings.HasPrefix(t[start:], "SK") && run(t, start+2, isHex) >= 32
	},
	// \b(ey[a-zA-Z0-9]{17,}\.ey...
	"jwt": func(t, _ string, start, _ int) bool {
		return strings.HasPrefix(t[start:], "ey") && run(t, start+2, isAlnum) >= 17
	},
	// \b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))
	"vault-service-token": func(t, _ string, start, end int) bool {
		switch t[start:end] {
		case "hvs.":
			return run(t, end, isWordOrDash) >= 90
		case "s.":
			return run(t, end, isAlnum) >= 24
		}
		return false
	},
	// \b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b
	"aws-access-token": func(t, _ string, start, end int) bool {
		return t[start:end] == strings.ToUpper(t[start:end]) && run(t, start+4, isUpperOrDigit) >= 16
	},
	// \b(SG\.(?i)[a-z0-9=_\-\.]{66})
	"sendgrid-api-token": func(t, _ string, start, end int) bool {
		return t[start:end] == "SG." && run(t, end, func(c byte) bool { return isWordOrDash(c) || c == '=' || c == '.' }) >= 66
	},
	// (?i)(?:\bkind:[ \t]*["']?\bsecret\b...\bdata:...|\bdata:...\bkind:...)
	// [^\s:/@'"<>]{1,256}:([^\s/@'"<>]{1,256})@ after the scheme's ://
	"url-credentials": func(t, _ string, _, end int) bool {
		authority := t[end:min(len(t), end+514)]
		stop := strings.IndexAny(authority, "/ \t\n\r'\"<>")
		if stop >= 0 {
			authority = authority[:stop]
		}
		colon := strings.IndexByte(authority, ':')
		return colon > 0 && strings.IndexByte(authority[colon:], '@') > 1
	},
	// (evaluated once per text: see textShapes)
	"kubernetes-secret-yaml": func(_, lower string, _, _ int) bool {
		return strings.Contains(lower, "kind:") && strings.Contains(lower, "data:")
	},
}

// textShapes are the shapes that do not depend on where the keyword
// stands: Find asks them once per text.
var textShapes = map[string]bool{"kubernetes-secret-yaml": true}

func run(t string, i int, class func(byte) bool) int {
	n := 0
	for i+n < len(t) && class(t[i+n]) {
		n++
	}
	return n
}

// The classes of the shapes take every non-ASCII byte: under (?i) a class
// of ASCII letters matches ſ and the Kelvin sign too, and a count of
// bytes is never less than the count of characters.

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c >= 0x80
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

func isUpperOrDigit(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || c >= 0x80 }

func isWordOrDash(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// mayAssign reports whether an identifier, operator, value match may hold
// the keyword found at text[start:end]: the keyword is part of the
// identifier, after which at most 107 characters of identifiers, spaces,
// quotes and operators ([\w.-]{0,84} of the identifier, [ \t\w.-]{0,20}
// and [\s'"]{0,3}) reach an operator, and after at most 10 operator and
// quoting characters comes a value of at least minValue characters (2
// fewer when quotes may be part of the value). Every operator in reach is
// tried: an identifier may hold one (new-york-times,).
func mayAssign(t string, end, minValue int) bool {
	for i, limit := end, min(len(t), end+108); i < limit; i++ {
		c := t[i]
		if isOperator(c) {
			if valueAfter(t, i) >= minValue-2 {
				return true
			}
			continue
		}
		if !isIdentChar(c) && !isSpace(c) && c != '\'' && c != '"' {
			return false
		}
	}
	return false
}

// valueAfter is the length of the value that may follow the operator at
// t[i].
func valueAfter(t string, i int) int {
	for n := 0; n < 10 && i < len(t) && (isOperator(t[i]) || isSpace(t[i]) || strings.IndexByte("`'\"", t[i]) >= 0); n++ {
		i++
	}
	value := 0
	for i+value < len(t) && !isSpace(t[i+value]) && strings.IndexByte("`'\";", t[i+value]) < 0 {
		value++
	}
	return value
}

func isIdentChar(c byte) bool { return isWordOrDash(c) || c == '.' || c >= 0x80 }
func isOperator(c byte) bool  { return strings.IndexByte("=>:|?,", c) >= 0 }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// Named reports whether a name (an object key, a header) holds one of the
// rules' keywords, so that its value may be a secret only the name tells:
// {"access_token": "..."}.
func (s *Scanner) Named(name string) bool {
	return len(s.trie.MatchString(asciiLower(name))) > 0
}

// Assignment returns the secrets in the value of a name, as they stand in
// value: it reads them as gitleaks reads name = "value" in a file, which is
// how a JSON member, a header or a form field is written once decoded.
func (s *Scanner) Assignment(name, value string) []Match {
	prefix := name + ` = "`
	var out []Match
	for _, m := range s.Find(prefix + value + `"`) {
		start, end := m.Start-len(prefix), min(m.End-len(prefix), len(value))
		if start >= 0 && start < end {
			out = append(out, Match{Rule: m.Rule, Start: start, End: end})
		}
	}
	return out
}

// Find returns the secrets in text, each the span of the secret itself
// (the rule's secret group: the value of an assignment, not its name), in
// order of rules; spans of different rules may overlap.
func (s *Scanner) Find(text string) []Match {
	if len(text) < s.shortest {
		return nil
	}
	lower := strings.ToLower(text)
	if len(lower) != len(text) {
		// Lower-casing changed some lengths (a few non-ASCII letters do):
		// fold ASCII only, so offsets agree.
		lower = asciiLower(text)
	}
	hits := s.trie.MatchString(lower)
	if len(hits) == 0 {
		return nil
	}
	// For each rule, the windows of the text it must run on; whole: the
	// text.
	type plan struct {
		whole   bool
		shaped  bool // a text shape said no
		windows [][2]int
	}
	plans := map[int]*plan{}
	var direct []Match // findings of the anchored expressions
	for _, h := range hits {
		start := int(h.Pos())
		end := start + len(h.Match())
		for _, ri := range s.byWord[string(h.Match())] {
			r := s.rules[ri]
			p := plans[ri]
			if p == nil {
				p = &plan{}
				plans[ri] = p
			}
			switch {
			case p.whole:
			case r.exact && !slices.Contains(own()[ri-s.gitleaks].Keywords, text[start:end]):
			case r.identifier && !r.named[string(h.Match())]:
				// A keyword of the value: the identifier and operator
				// stand at most 50 + 84 + 23 + 10 before it.
				p.windows = append(p.windows, [2]int{max(0, start-200), min(len(text), end+300)})
			case r.identifier:
				if mayAssign(text, end, r.minValue) {
					if m, ok := s.assignment(r, text, start, end); ok {
						direct = append(direct, m)
					}
				}
			case r.shape != nil:
				if p.shaped {
					break
				}
				if r.shape(text, lower, start, end) {
					p.whole = true
				} else if textShapes[r.id] {
					p.shaped = true
				}
			default:
				p.whole = true
			}
		}
	}
	found := direct
	for ri := range s.rules {
		p := plans[ri]
		if p == nil {
			continue
		}
		r := s.rules[ri]
		if p.whole {
			found = s.match(r, text, 0, len(text), found)
			continue
		}
		for _, w := range merge(p.windows) {
			found = s.match(r, text, w[0], w[1], found)
		}
	}
	return found
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// assignment tries the anchored expression where the identifier holding
// the keyword at text[start:end] may begin (it is at most 40 characters
// long), and keeps what it finds as gitleaks keeps a finding: the value,
// above the rule's entropy, allowed by no allowlist, where the match the
// allowlists see starts as the whole expression's would, up to 50 word
// characters before the identifier. The whole expression, far costlier,
// never runs.
func (s *Scanner) assignment(r *scanRule, text string, start, end int) (Match, bool) {
	for p := max(0, end-40); p <= start; p++ {
		if !r.ident.MatchString(text[p:min(len(text), p+40)]) {
			continue
		}
		hi := min(len(text), p+256)
		m := r.anchored.FindStringSubmatchIndex(text[p:hi])
		if m != nil && p+m[1] == hi && hi < len(text) {
			for hi < len(text) && !isSpace(text[hi]) {
				hi++
			}
			m = r.anchored.FindStringSubmatchIndex(text[p:hi])
		}
		if m == nil {
			continue
		}
		ss, se := p+m[2], p+m[3]
		if r.group > 0 && 2*r.group+1 < len(m) && m[2*r.group] >= 0 {
			ss, se = p+m[2*r.group], p+m[2*r.group+1]
		}
		secret := text[ss:se]
		if secret == "" || r.entropy > 0 && entropy(secret) <= r.entropy {
			return Match{}, false
		}
		ms, me := p, p+m[1]
		for ms > 0 && p-ms < 50 && isWordOrDash(text[ms-1]) || ms > 0 && p-ms < 50 && text[ms-1] == '.' {
			ms--
		}
		for me > ms && text[me-1] == '\n' {
			me--
		}
		if allowed(s.allow, text, ms, me, secret) || allowed(r.allow, text, ms, me, secret) {
			return Match{}, false
		}
		return Match{Rule: r.id, Start: ss, End: se}, true
	}
	return Match{}, false
}

// merge joins overlapping windows, in order.
func merge(w [][2]int) [][2]int {
	slices.SortFunc(w, func(a, b [2]int) int { return a[0] - b[0] })
	out := w[:0]
	for _, x := range w {
		if n := len(out); n > 0 && x[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}

// match runs one rule on text[lo:hi] and keeps its findings as gitleaks
// does: the secret group, above the rule's entropy, not allowed by the
// global or the rule's allowlists. A match that reaches the end of a
// window may be cut short by it ($ matches there): the rule then runs
// again on the window extended to the next white space, where the values
// of the rules that run in windows end.
func (s *Scanner) match(r *scanRule, text string, lo, hi int, found []Match) []Match {
	ms := r.re.FindAllStringSubmatchIndex(text[lo:hi], -1)
	if hi < len(text) && len(ms) > 0 && lo+ms[len(ms)-1][1] == hi {
		for hi < len(text) && !isSpace(text[hi]) {
			hi++
		}
		ms = r.re.FindAllStringSubmatchIndex(text[lo:hi], -1)
	}
	for _, m := range ms {
		start, end := lo+m[0], lo+m[1]
		for start < end && text[end-1] == '\n' {
			end--
		}
		ss, se := r.secret(text, start, end)
		secret := text[ss:se]
		if secret == "" || r.entropy > 0 && entropy(secret) <= r.entropy {
			continue
		}
		if allowed(s.allow, text, start, end, secret) || allowed(r.allow, text, start, end, secret) {
			continue
		}
		found = append(found, Match{Rule: r.id, Start: ss, End: se})
	}
	return found
}

// secret returns the span of the secret in the match text[start:end]: the
// rule's secret group, or the first group that matched something, found,
// as gitleaks finds it, by matching the match again on its own (where its
// end may be the end of the text); the whole match when the groups are
// named, as they are in rules that use them to tell token kinds apart.
func (r *scanRule) secret(text string, start, end int) (int, int) {
	if r.re.NumSubexp() == 0 || slices.ContainsFunc(r.re.SubexpNames(), func(n string) bool { return n != "" }) {
		return start, end
	}
	g := r.re.FindStringSubmatchIndex(text[start:end])
	if g == nil {
		return start, end
	}
	if r.group > 0 {
		if 2*r.group+1 < len(g) && g[2*r.group] >= 0 {
			return start + g[2*r.group], start + g[2*r.group+1]
		}
		return start, end
	}
	for i := 2; i+1 < len(g); i += 2 {
		if g[i] >= 0 && g[i+1] > g[i] {
			return start + g[i], start + g[i+1]
		}
	}
	return start, end
}

// allowed applies gitleaks allowlists to one finding: their expressions
// (on the secret, the match or the line) and stop words (on the secret).
// Conditions on commits and paths never hold for text.
func allowed(lists []*config.Allowlist, text string, start, end int, secret string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = text[start:end]
		case "line":
			ls := strings.LastIndexByte(text[:start], '\n') + 1
			le := strings.IndexByte(text[end:], '\n')
			if le < 0 {
				le = len(text)
			} else {
				le += end
			}
			target = text[ls:le]
		}
		regexOK := a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Commits) > 0 || len(a.Paths) > 0 {
				continue
			}
			ok := len(a.Regexes) > 0 || len(a.StopWords) > 0
			if len(a.Regexes) > 0 {
				ok = ok && regexOK
			}
			if len(a.StopWords) > 0 {
				ok = ok && stop
			}
			if ok {
				return true
			}
			continue
		}
		if regexOK || stop {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// Redact returns text with every secret the scanner finds replaced by
// what with says of it (see the package's Redact).
func (s *Scanner) Redact(text string, with func(Match) string) string {
	return Redact(text, s.Find(text), with)
}
