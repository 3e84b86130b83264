package sanitize

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Rules tell the sanitizer where the known personal fields are, so it learns
// each original value before the free-text pass replaces it everywhere.
// Paths are gjson paths of plain keys, with # for every array element; a
// path that ends at an array learns each of its elements.
type Rules struct {
	Version int    `json:"version"`
	Profile string `json:"profile,omitempty"`
	// Document rules apply to the whole file, such as the exporter stamp.
	Document []Rule `json:"document,omitempty"`
	// Identities rules apply to each object of the top-level identities.
	Identities []Rule `json:"identities,omitempty"`
	// Events rules apply to each row of the given type; "*" to every row.
	Events map[string][]Rule `json:"events,omitempty"`
	// NotSecrets are expressions (Go syntax) of the product's own ids that
	// the secret rules would take for credentials, such as Junior's web
	// message ids (api-msg:<hex>, which gitleaks' generic-api-key
	// matches): a secret found wholly inside a match of one stays.
	NotSecrets []string `json:"notSecrets,omitempty"`
	// IDFields are the product's fields whose names hold a secret rule's
	// keyword but whose values are ids (idempotencyKey, authorIdentityId):
	// their values are scanned as any text, not as the value of a
	// credential the name tells of.
	IDFields []string `json:"idFields,omitempty"`
	// NotNames are phrases the name detector would take for a person's
	// name but are the product's or another's words ("Chat Completions",
	// "Grant Access"): matched whole, in any letter case, they stay.
	NotNames []string `json:"notNames,omitempty"`
}

// Rule names one field and what it holds.
type Rule struct {
	Path string   `json:"path"`
	Kind RuleKind `json:"kind"`
	// UnlessBot skips the field when its object has "isBot": true: bot
	// names are not personal and stay.
	UnlessBot bool `json:"unlessBot,omitempty"`
}

// RuleKind is what a rule's field holds. Besides the Kinds, a rule can say
// user_ref (a Slack user id, dashboard id or email, told apart by shape),
// user_name (a full name if it has a space, else a handle) and
// conversation_id (slack:<channel>:<ts> or local:web:<hash>).
type RuleKind string

const (
	ruleUserRef        RuleKind = "user_ref"
	ruleUserName       RuleKind = "user_name"
	ruleConversationID RuleKind = "conversation_id"
)

var ruleKinds = map[RuleKind]bool{
	ruleUserRef: true, ruleUserName: true, ruleConversationID: true,
	RuleKind(KindSlackID): true, RuleKind(KindEmail): true, RuleKind(KindName): true, RuleKind(KindHandle): true,
	RuleKind(KindIdentityID): true, RuleKind(KindDashboardID): true, RuleKind(KindURL): true, RuleKind(KindPhone): true,
}

//go:embed rules/junior.json
var juniorRules []byte

// DefaultRules returns the checked-in rules of the junior profile.
func DefaultRules() *Rules {
	r, err := ParseRules(bytes.NewReader(juniorRules), "rules/junior.json")
	if err != nil {
		panic(err) // embedded and tested
	}
	return r
}

// ParseRules reads a rules file. Unknown keys, kinds and path syntax beyond
// plain keys and # are errors, so a typo cannot silently match nothing.
func ParseRules(r io.Reader, name string) (*Rules, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var rules Rules
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("rules %s: %w", name, err)
	}
	if rules.Version != 1 {
		return nil, fmt.Errorf("rules %s: version %d is not supported (want 1)", name, rules.Version)
	}
	check := func(where string, list []Rule) error {
		for i, rule := range list {
			if !ruleKinds[rule.Kind] {
				return fmt.Errorf("rules %s: %s[%d]: unknown kind %q", name, where, i, rule.Kind)
			}
			if rule.Path == "" || strings.ContainsAny(rule.Path, "|@!{}[]()*?=<>%\\") {
				return fmt.Errorf("rules %s: %s[%d]: path %q: use plain keys separated by dots, and # for array elements", name, where, i, rule.Path)
			}
		}
		return nil
	}
	if err := check("document", rules.Document); err != nil {
		return nil, err
	}
	for i, expr := range rules.NotSecrets {
		if _, err := regexp.Compile(expr); err != nil {
			return nil, fmt.Errorf("rules %s: notSecrets[%d]: %v", name, i, err)
		}
	}
	if err := check("identities", rules.Identities); err != nil {
		return nil, err
	}
	for typ, list := range rules.Events {
		if err := check("events."+typ, list); err != nil {
			return nil, err
		}
	}
	return &rules, nil
}

// Merge adds the rules of other to r.
func (r *Rules) Merge(other *Rules) {
	r.Document = append(r.Document, other.Document...)
	r.NotSecrets = append(r.NotSecrets, other.NotSecrets...)
	r.IDFields = append(r.IDFields, other.IDFields...)
	r.NotNames = append(r.NotNames, other.NotNames...)
	r.Identities = append(r.Identities, other.Identities...)
	if r.Events == nil {
		r.Events = map[string][]Rule{}
	}
	for typ, list := range other.Events {
		r.Events[typ] = append(r.Events[typ], list...)
	}
}

// Digest identifies the rules, and the word lists the sanitizer reads,
// in stamps and reports.
func (r *Rules) Digest() string {
	b, err := json.Marshal(r) // map keys are sorted: stable
	if err != nil {
		panic(err)
	}
	// The word lists decide what the name detector finds: a change of
	// list changes the digest.
	sum := sha256.Sum256(append(b, names().digest...))
	return hex.EncodeToString(sum[:8])
}

// ruleTrie holds rules by path, so that one walk serves every rule that
// shares a prefix.
type ruleTrie struct {
	kids  map[string]*ruleTrie
	rules []Rule
}

func (t *ruleTrie) add(r Rule) {
	for _, key := range strings.Split(r.Path, ".") {
		if t.kids == nil {
			t.kids = map[string]*ruleTrie{}
		}
		kid := t.kids[key]
		if kid == nil {
			kid = &ruleTrie{}
			t.kids[key] = kid
		}
		t = kid
	}
	t.rules = append(t.rules, r)
}

func trieOf(lists ...[]Rule) *ruleTrie {
	t := &ruleTrie{}
	for _, list := range lists {
		for _, r := range list {
			t.add(r)
		}
	}
	return t
}

// tries are the rules of a Rules, by where they apply.
type tries struct {
	document   *ruleTrie
	identities *ruleTrie
	byType     map[string]*ruleTrie
	topKeys    map[string]bool // the row fields any event rule starts at
}

func newTries(r *Rules) tries {
	t := tries{document: trieOf(r.Document), identities: trieOf(r.Identities), byType: map[string]*ruleTrie{}, topKeys: map[string]bool{}}
	for typ, list := range r.Events {
		for _, rule := range list {
			t.topKeys[strings.Split(rule.Path, ".")[0]] = true
		}
		if typ == "*" {
			t.byType[typ] = trieOf(r.Events["*"])
		} else {
			t.byType[typ] = trieOf(r.Events["*"], r.Events[typ])
		}
	}
	return t
}

// events returns the trie for rows of type typ: its own rules and "*".
func (t tries) events(typ string) *ruleTrie {
	if tr, ok := t.byType[typ]; ok {
		return tr
	}
	return t.byType["*"]
}

// notSecrets compiles the NotSecrets of r into one expression; nil when
// there are none.
func (r *Rules) notSecrets() *regexp.Regexp {
	if len(r.NotSecrets) == 0 {
		return nil
	}
	return regexp.MustCompile("(?:" + strings.Join(r.NotSecrets, ")|(?:") + ")") // each checked by ParseRules
}

// notSecret reports whether text[start:end] lies wholly inside a match of
// the product's not-secret ids.
func notSecret(re *regexp.Regexp, text string, start, end int) bool {
	if re == nil {
		return false
	}
	for _, m := range re.FindAllStringIndex(text, -1) {
		if m[0] <= start && end <= m[1] {
			return true
		}
	}
	return false
}
