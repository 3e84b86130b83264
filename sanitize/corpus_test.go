package sanitize

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/agentvcr/agentvcr/history"
)

// The planted corpus: Junior-shaped exports (Slack and web, identities
// included, tool results that imitate the Slack Web API, documents nested
// in strings two deep), written by encoders that escape as Go, Python and
// JavaScript do, with every value of testdata/planted.json in many forms.
// The test holds the sanitizer to its promise with a checker of its own,
// which shares nothing with the rewrite or the leak check: no planted value
// survives, in any form, in anything written.

type plantedPerson struct {
	ID       string `json:"id"`
	Github   string `json:"github"`
	Name     string `json:"name"`
	Handle   string `json:"handle"`
	Email    string `json:"email"`
	Personal string `json:"personal"`
}

type secretSpec struct {
	Family     string      `json:"family"`
	Prefix     string      `json:"prefix"`
	Alphabet   string      `json:"alphabet"`
	Length     int         `json:"length"`
	Suffix     *secretSpec `json:"suffix"`
	Sep        string      `json:"sep"`
	Then       *secretSpec `json:"then"`
	SecretOnly bool        `json:"secretOnly"`
}

type plantedSet struct {
	Workspace struct {
		Team, Host, Enterprise string
	} `json:"workspace"`
	People            []plantedPerson `json:"people"`
	NotInConversation []plantedPerson `json:"notInConversation"`
	Channels          []struct{ ID, Name string }
	SlackIDs          []string     `json:"slackIDs"`
	Phones            []string     `json:"phones"`
	PhoneNumbers      []string     `json:"phoneNumbers"`
	IPv4              []string     `json:"ipv4"`
	IPv6              []string     `json:"ipv6"`
	IBANs             []string     `json:"ibans"`
	Cards             []string     `json:"cards"`
	CardNumbers       []string     `json:"cardNumbers"`
	DashboardIDs      []string     `json:"dashboardIDs"`
	Secrets           []secretSpec `json:"secrets"`
	UnknownNames      []string     `json:"unknownNames"`
}

// plantedValue is one value the output must not hold, and how to look for
// it.
type plantedValue struct {
	class string
	value string
	// verbatim: a name that is an English word ("Mark"), which may stay in
	// lower case.
	verbatim bool
}

func loadPlanted(t testing.TB) *plantedSet {
	t.Helper()
	b, err := os.ReadFile("testdata/planted.json")
	if err != nil {
		t.Fatal(err)
	}
	var p plantedSet
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// token builds a secret from its spec: never a real one, but in the shape
// of its family, with high entropy.
func token(rng *rand.Rand, sp *secretSpec) string {
	alphabets := map[string]string{
		"alnum": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "alnum-": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
		"upper27": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "base64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
		"letters": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "lower-alnum": "abcdefghijklmnopqrstuvwxyz0123456789",
		"hex": "0123456789abcdef", "digits": "0123456789", "upper-digits": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	}
	var b strings.Builder
	b.WriteString(sp.Prefix)
	b.WriteString(sp.Sep)
	a := alphabets[sp.Alphabet]
	for range sp.Length {
		b.WriteByte(a[rng.IntN(len(a))])
	}
	if sp.Suffix != nil {
		b.WriteString(token(rng, &secretSpec{Sep: sp.Suffix.Sep, Alphabet: sp.Suffix.Alphabet, Length: sp.Suffix.Length, Suffix: sp.Suffix.Then}))
	}
	return b.String()
}

// corpus is the planted documents, their people, and the values to hunt.
type corpus struct {
	docs    map[string][]byte
	people  *People
	values  []plantedValue
	unknown []plantedValue // names no dictionary holds: the known limit
}

func buildCorpus(t testing.TB) *corpus {
	t.Helper()
	p := loadPlanted(t)
	rng := rand.New(rand.NewPCG(8, 13))
	c := &corpus{docs: map[string][]byte{}, people: &People{Kind: PeopleKind, Version: 1}}
	add := func(class string, vs ...string) {
		for _, v := range vs {
			c.values = append(c.values, plantedValue{class: class, value: v})
		}
	}
	var secretTexts, secretValues []string
	for i := range p.Secrets {
		tok := token(rng, &p.Secrets[i])
		secretTexts = append(secretTexts, tok)
		v := tok
		if p.Secrets[i].SecretOnly {
			v = strings.TrimPrefix(tok, p.Secrets[i].Prefix)
			if p.Secrets[i].Suffix != nil && p.Secrets[i].Suffix.Alphabet == "" {
				v = strings.TrimSuffix(v, p.Secrets[i].Suffix.Sep)
			}
		}
		secretValues = append(secretValues, v)
	}
	add("secret", secretValues...)
	everyone := append(append([]plantedPerson(nil), p.People...), p.NotInConversation...)
	for _, who := range everyone {
		add("name", who.Name)
		for _, part := range strings.Fields(who.Name) {
			c.values = append(c.values, plantedValue{class: "name part", value: part, verbatim: englishWordForTest(strings.ToLower(part))})
		}
		add("handle", who.Handle)
		add("email", who.Email)
		if who.Personal != "" {
			add("email", who.Personal)
		}
		if who.ID != "" {
			add("slack id", who.ID)
		}
		if who.Github != "" {
			add("github id", who.Github)
		}
		c.people.Identities = append(c.people.Identities, plantedIdentity(p, who))
	}
	add("slack id", p.Workspace.Team, p.Workspace.Enterprise)
	add("workspace", p.Workspace.Host)
	for _, ch := range p.Channels {
		add("slack id", ch.ID)
		add("channel", ch.Name)
	}
	add("slack id", p.SlackIDs...)
	add("phone", p.Phones...)
	add("phone", p.PhoneNumbers...)
	add("ip", p.IPv4...)
	add("ip", p.IPv6...)
	add("iban", p.IBANs...)
	for _, iban := range p.IBANs {
		add("iban", strings.ReplaceAll(iban, " ", ""))
	}
	add("card", p.Cards...)
	add("card", p.CardNumbers...)
	for _, d := range p.DashboardIDs {
		add("dashboard id", strings.TrimPrefix(d, "dashboard:"))
	}
	for _, n := range p.UnknownNames {
		c.unknown = append(c.unknown, plantedValue{class: "unknown name", value: n})
	}

	encoders := []encoder{
		{name: "go", html: true},
		{name: "python", ascii: true, spaced: true},
		{name: "js"},
		{name: "slashes", slash: true},
	}
	for i, outer := range encoders {
		inner := encoders[(i+1)%len(encoders)]
		deepest := encoders[(i+2)%len(encoders)]
		slack := plantedDoc(p, rng, history.SurfaceSlack, i, outer, inner, deepest, secretTexts)
		c.docs[fmt.Sprintf("slack-%s.json", outer.name)] = slack
		web := plantedDoc(p, rng, history.SurfaceWeb, i+1, outer, inner, deepest, secretTexts)
		c.docs[fmt.Sprintf("web-%s.json", outer.name)] = web
	}
	if len(c.values) < 150 {
		t.Fatalf("the corpus plants %d values; the issue asks for at least 150", len(c.values))
	}
	return c
}

func plantedIdentity(p *plantedSet, who plantedPerson) history.Identity {
	id := history.Identity{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", len(who.Name), len(who.Handle)*7919+len(who.Email)),
		Kind: "user", Provider: "slack", ProviderTenantID: p.Workspace.Team, ProviderSubjectID: who.ID,
		DisplayName: &who.Name, Handle: &who.Handle, Email: &who.Email, EmailNormalized: &who.Email}
	if who.Github != "" {
		id.Provider, id.ProviderTenantID, id.ProviderSubjectID = "github", "", who.Github
	}
	return id
}

// englishWordForTest reads the embedded word list with code of its own.
func englishWordForTest(w string) bool {
	return englishWord(w)
}

// variants are forms of a name that people and tools write.
func variants(name string) []string {
	folded := strings.Map(func(r rune) rune {
		switch r {
		case 'ø':
			return 'o'
		case 'Ø':
			return 'O'
		case 'ł':
			return 'l'
		}
		return r
	}, norm.NFD.String(name))
	folded = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, folded)
	return []string{
		name, strings.ToLower(name), strings.ToUpper(name), norm.NFD.String(name), folded,
		strings.ReplaceAll(name, "'", "\u2019"),
	}
}

// plantedDoc writes one export: outer encodes the document, inner the
// model messages in payload.message, deepest the Slack API responses in
// tool results, which are JSON text inside those messages.
func plantedDoc(p *plantedSet, rng *rand.Rand, surface history.Surface, n int, outer, inner, deepest encoder, secretTexts []string) []byte {
	var rows []any
	seq := 0
	row := func(typ string, schemaVersion int, payload obj) {
		rows = append(rows, obj{{"createdAtMs", 1790000000000 + seq*1000}, {"historyVersion", 0},
			{"idempotencyKey", fmt.Sprintf("%s:%d", typ, seq)}, {"payload", payload}, {"schemaVersion", schemaVersion},
			{"seq", seq}, {"type", typ}})
		seq++
	}
	var ids []any
	for _, who := range p.People {
		author := obj{{"userId", who.ID}, {"userName", who.Handle}, {"fullName", who.Name}, {"isBot", false}, {"email", who.Email}}
		if who.Github != "" {
			author = obj{{"userName", who.Handle}, {"fullName", who.Name}}
		}
		vs := variants(who.Name)
		first := strings.Fields(who.Name)[0]
		text := fmt.Sprintf("thx %s! %s and %s asked, cc %s <%s>; %s\n%s said it was %s's call.\u00a0%s?",
			strings.ToLower(first), vs[3], vs[4], vs[(n+2)%len(vs)], who.Email, vs[5], first, who.Handle, first)
		row("message", 1, obj{{"messageId", fmt.Sprintf("17900%05d.000100", seq)}, {"role", "user"}, {"text", text},
			{"meta", obj{{"author", author}, {"slackTs", fmt.Sprintf("17900%05d.000100", seq)}}}})
		// The instruction Junior builds, with the author in an XML attribute.
		instruction := fmt.Sprintf(`<current-instruction author_id="%s" author_name="%s">please loop in %s (%s)</current-instruction>`,
			who.ID, html.EscapeString(who.Name), vs[1], who.Handle)
		row("user_message", 2, obj{{"message", inner.encode(obj{{"role", "user"}, {"content", []any{obj{{"type", "text"}, {"text", instruction}}}}})}})
		ids = append(ids, identityObj(p, who))
	}
	// Tool results that imitate the Slack Web API, as text in a model
	// message: two documents deep.
	var messages []any
	for i, who := range p.People {
		ch := p.Channels[i%len(p.Channels)]
		messages = append(messages, obj{{"user", who.ID}, {"ts", fmt.Sprintf("1790001%03d.000200", i)},
			{"text", fmt.Sprintf("<@%s|%s> moved this to <#%s|%s>; ping %s at %s or &lt;#%s|%s&gt;", who.ID, who.Handle, ch.ID, ch.Name,
				who.Name, p.Phones[i%len(p.Phones)], ch.ID, ch.Name)},
			{"user_profile", obj{{"real_name", who.Name}, {"display_name", who.Handle}, {"email", who.Email},
				{"image_72", "https://avatars.slack-edge.com/2026-01-01/" + who.ID + "_72.png"}}}})
	}
	api := deepest.encode(obj{{"ok", true}, {"messages", messages}, {"team", p.Workspace.Team}, {"enterprise_id", p.Workspace.Enterprise}})
	row("tool_result", 2, obj{{"toolCallId", "call_1"}, {"message", inner.encode(obj{{"role", "tool"}, {"toolName", "slackConversationsReplies"},
		{"content", []any{obj{{"type", "text"}, {"text", api}}}}})}})
	// Secrets, ids and numbers in an environment dump and a link list.
	var env strings.Builder
	for i, s := range secretTexts {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&env, "SECRET_%d=%s\n", i, s)
		case 1:
			fmt.Fprintf(&env, "%s\n", s)
		default:
			fmt.Fprintf(&env, "export VAL%d=\"%s\"\n", i, s)
		}
	}
	who := p.People[0]
	links := fmt.Sprintf("https://%s.slack.com/archives/%s/p1790000001000100 https://NorthWind-Ops.Slack.com/team/%s "+
		"https://app.example.org/dm?user=%s&team=%%2F%s%%2F files: nadia_noor_401.png %s_2026-09-30.json %s_backup "+
		"webhook=%s from %s and %s, %s, %s; IBAN %s, card %s, %s, %s; %s; %s %s %s %s %s",
		p.Workspace.Host, p.Channels[0].ID, who.ID, url.QueryEscape(who.Email), p.Workspace.Team, p.Channels[0].ID, p.Workspace.Team,
		url.QueryEscape(secretTexts[16]), p.IPv4[0], p.IPv4[1], p.IPv6[n%len(p.IPv6)], p.IPv4[2+n%2], p.IBANs[n%len(p.IBANs)],
		p.Cards[n%len(p.Cards)], p.Cards[(n+1)%len(p.Cards)], p.IBANs[(n+1)%len(p.IBANs)], strings.Join(p.SlackIDs, " "),
		p.DashboardIDs[0], strings.Join(p.Phones, ", "), strings.Join(p.IBANs, "; "), strings.Join(p.Cards, "; "), strings.Join(p.IPv6, " "))
	row("tool_result", 2, obj{{"toolCallId", "call_2"}, {"message", inner.encode(obj{{"role", "tool"}, {"toolName", "bash"},
		{"content", []any{obj{{"type", "text"}, {"text", env.String()}}, obj{{"type", "text"}, {"text", links}}}}})}})
	// The same people, keys and numbers as a tool's JSON: keys that are
	// emails, a GitHub id and a card and phone numbers as JSON numbers.
	byEmail := obj{}
	for _, w := range p.People {
		byEmail = append(byEmail, kv{w.Email, obj{{"name", w.Name}, {"handle", w.Handle}}})
	}
	var numbers []any
	for _, s := range append(append([]string{p.People[len(p.People)-1].Github}, p.CardNumbers...), p.PhoneNumbers...) {
		numbers = append(numbers, json.Number(s))
	}
	row("tool_result", 2, obj{{"toolCallId", "call_3"}, {"message", inner.encode(obj{{"role", "tool"}, {"toolName", "directory"},
		{"content", []any{obj{{"type", "json"}, {"value", obj{{"people", byEmail}, {"numbers", numbers}}}}}}})}})
	// A summary that names people of the workspace who took no part.
	var others []string
	for _, o := range p.NotInConversation {
		others = append(others, o.Name+" ("+o.Email+")")
	}
	row("compaction", 1, obj{{"summary", "Draft a note to " + strings.Join(others, " and ") + " about the payments incident. " +
		"Also mentioned: " + strings.Join(p.UnknownNames, ", ") + "."}})
	// The reply, with mentions, a CJK sentence, an Arabic prefix, and
	// Cyrillic in capitals.
	row("assistant_message", 2, obj{{"message", inner.encode(obj{{"role", "assistant"}, {"content", []any{obj{{"type", "text"},
		{"text", fmt.Sprintf("Done, <@%s>. 王小明同意了。田中さんも。و%s قال. %s. nadia.personal@gmail.com, %s.private@gmail.com. <td>%s</td> Key\n%s",
			p.People[0].ID, "أحمد", strings.ToUpper("Дмитрий Волков"), p.People[8].Handle, strings.Fields(p.People[8].Name)[0], secretTexts[4])}}}}})}})

	doc := obj{{"version", 1}, {"surface", string(surface)},
		{"exporter", obj{{"tool", "agentvcr"}, {"profile", "junior"}, {"conversationId", fmt.Sprintf("slack:%s:1790000001.000100", p.Channels[0].ID)}}},
		{"identities", ids}, {"events", rows}}
	return []byte(outer.encode(doc))
}

func identityObj(p *plantedSet, who plantedPerson) obj {
	id := plantedIdentity(p, who)
	b, _ := json.Marshal(id)
	var o obj
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var m map[string]any
	dec.Decode(&m)
	for _, k := range []string{"id", "kind", "provider", "providerTenantId", "providerSubjectId", "displayName", "handle", "email", "emailNormalized", "emailVerified", "createdAtMs", "updatedAtMs"} {
		if v, ok := m[k]; ok {
			o = append(o, kv{k, v})
		}
	}
	return o
}

// obj is a JSON object that keeps its keys in order.
type obj []kv

type kv struct {
	k string
	v any
}

// encoder writes JSON as one family of encoders does.
type encoder struct {
	name   string
	html   bool // Go: <, >, & as \u003c
	ascii  bool // Python: every non-ASCII character as \uXXXX
	slash  bool // PHP: / as \/
	spaced bool // Python: ", " and ": "
}

func (e encoder) encode(v any) string {
	var b strings.Builder
	e.write(&b, v)
	return b.String()
}

func (e encoder) write(b *strings.Builder, v any) {
	comma, colon := ",", ":"
	if e.spaced {
		comma, colon = ", ", ": "
	}
	switch v := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, f := range v {
			if i > 0 {
				b.WriteString(comma)
			}
			e.str(b, f.k)
			b.WriteString(colon)
			e.write(b, f.v)
		}
		b.WriteByte('}')
	case map[string]any:
		panic("use obj")
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteString(comma)
			}
			e.write(b, x)
		}
		b.WriteByte(']')
	case string:
		e.str(b, v)
	case json.Number:
		b.WriteString(string(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		raw, _ := json.Marshal(v)
		b.Write(raw)
	}
}

func (e encoder) str(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case e.html && (r == '<' || r == '>' || r == '&'):
			fmt.Fprintf(b, `\u%04x`, r)
		case e.slash && r == '/':
			b.WriteString(`\/`)
		case e.ascii && r > 0xffff:
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		case e.ascii && r >= 0x80:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + r>>10, 0xdc00 + r&0x3ff
}

// survivors returns the planted values that the output holds in any form:
// as written, in any letter case, in NFD, JSON-escaped one to three times,
// \u-escaped, with \/, HTML-escaped or percent-encoded, in its raw bytes
// or in any string at any depth, decoded.
func survivors(out []byte, values []plantedValue) []string {
	// Raw bytes are a haystack for ids and secrets; a word is looked for in
	// decoded text only, where an escape next to it cannot pass for its
	// edge.
	raw := string(out)
	var texts []string
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case string:
			// A document is looked at in its strings, decoded; its text,
			// escapes and all, is in the raw haystack already.
			var inner any
			if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') && json.Unmarshal([]byte(v), &inner) == nil {
				collect(inner)
				return
			}
			texts = append(texts, v, html.UnescapeString(v))
			if u, err := url.QueryUnescape(v); err == nil {
				texts = append(texts, u)
			}
		case map[string]any:
			for k, x := range v {
				texts = append(texts, k)
				collect(x)
			}
		case []any:
			for _, x := range v {
				collect(x)
			}
		case json.Number:
			texts = append(texts, v.String())
		}
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return []string{"the output is not JSON"}
	}
	collect(doc)
	// One haystack, the texts apart by a byte no form holds.
	joined := strings.Join(texts, "\x00")
	withRaw := joined + "\x00" + raw
	texts = []string{joined}
	lower := []string{strings.ToLower(joined)}
	rawLower := []string{strings.ToLower(withRaw)}
	var found []string
	for _, v := range values {
		for _, f := range formsOf(v) {
			hay, needle := lower, strings.ToLower(f)
			if !wordBounded(v) {
				hay = rawLower
			}
			if v.verbatim {
				// A name that is an English word stays in lower case:
				// look for it as written and in capitals only.
				if f == strings.ToLower(f) {
					continue
				}
				hay, needle = texts, f
			}
			if hit := inAny(hay, needle, wordBounded(v)); hit {
				found = append(found, fmt.Sprintf("%s %q as %q", v.class, v.value, f))
				break
			}
		}
	}
	return found
}

func formsOf(v plantedValue) []string {
	s := v.value
	base := []string{s, strings.ToUpper(s), norm.NFD.String(s), strings.ReplaceAll(s, "'", "\u2019")}
	if v.class == "name" || v.class == "name part" {
		base = append(base, variants(s)...)
	}
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, b := range base {
		esc := b
		for _, f := range []string{b, html.EscapeString(b), url.QueryEscape(b), url.PathEscape(b), strings.ReplaceAll(b, "/", `\/`), uEscaped(b)} {
			add(f)
		}
		for range 3 {
			q, _ := json.Marshal(esc)
			esc = string(q[1 : len(q)-1])
			add(esc)
		}
	}
	return out
}

// uEscaped writes every non-ASCII character as \uXXXX.
func uEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else if r <= 0xffff {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		}
	}
	return b.String()
}

// wordBounded says whether a value is looked for as a whole word (Latin
// names, whose fakes may hold a shorter original as a part) or anywhere.
func wordBounded(v plantedValue) bool {
	r, _ := utf8.DecodeRuneInString(v.value)
	return (v.class == "name part" || v.class == "name" || v.class == "handle" || v.class == "unknown name") && r < 0x250
}

var wordChar = regexp.MustCompile(`[\p{L}\p{N}\p{M}]`)

func inAny(texts []string, needle string, bounded bool) bool {
	for _, t := range texts {
		for from := 0; ; {
			i := strings.Index(t[from:], needle)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if !bounded {
				return true
			}
			before, _ := utf8.DecodeLastRuneInString(t[:i])
			after, _ := utf8.DecodeRuneInString(t[i+len(needle):])
			if (i == 0 || !wordChar.MatchString(string(before))) && (i+len(needle) == len(t) || !wordChar.MatchString(string(after))) {
				return true
			}
		}
	}
	return false
}

// nestedDocuments counts the strings, at any depth, that are JSON
// documents.
func nestedDocuments(doc []byte) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			var inner any
			if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') && json.Unmarshal([]byte(v), &inner) == nil {
				n++
				walk(inner)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	var v any
	json.Unmarshal(doc, &v)
	walk(v)
	return n
}

func TestPlantedCorpus(t *testing.T) {
	c := buildCorpus(t)
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LearnPeople(c.people); err != nil {
		t.Fatal(err)
	}
	for name, doc := range c.docs {
		if err := s.Learn(doc, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	unknownLeft := 0
	var refusals []string
	for name, doc := range c.docs {
		// The raw input holds what the test plants, else it proves nothing.
		if got := survivors(doc, c.values); len(got) < len(c.values)*8/10 {
			t.Fatalf("%s: only %d of %d planted values are in the raw input", name, len(got), len(c.values))
		}
		out, err := s.Sanitize(doc, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, left := range survivors(out, c.values) {
			t.Errorf("%s: %s survived", name, left)
		}
		if in, got := nestedDocuments(doc), nestedDocuments(out); in != got || in < 5 {
			t.Errorf("%s: %d nested documents in, %d out", name, in, got)
		}
		for _, addr := range anyEmail.FindAllString(string(out), -1) {
			if d := strings.ToLower(addr[strings.LastIndexByte(addr, '@')+1:]); d != "example.com" {
				t.Errorf("%s: an address on a real domain was written: %s", name, d)
			}
		}
		if found, err := checkFile(out, name); err != nil || len(found) != 0 {
			t.Errorf("%s: check of the output: %+v %v", name, found, err)
		}
		found, err := checkFile(doc, name)
		if err != nil || len(found) < 10 {
			t.Errorf("%s: check of the raw input found %d problems, %v", name, len(found), err)
		}
		// Side channels: what check says of the raw input holds no value.
		b, _ := json.Marshal(found)
		refusals = append(refusals, string(b))
		unknownLeft += len(survivors(out, c.unknown))
	}
	t.Logf("known limit: %d of %d names that no identity, people file or --names holds survived, over %d files",
		unknownLeft, len(c.unknown)*len(c.docs), len(c.docs))

	// Side channels: the report with paths, and the messages of refusals,
	// hold no planted value and no key that was one.
	s2, err := New(Options{Key: testKey, ReportPaths: true})
	if err != nil {
		t.Fatal(err)
	}
	s2.LearnPeople(c.people)
	for name, doc := range c.docs {
		if _, err := s2.Sanitize(doc, name); err != nil {
			t.Fatal(err)
		}
		// Refused: the same document with every planted value also in
		// base64 after a line of another length, a wrapping the rewrite
		// cannot write again ("note: " alone, then the value).
		var blobs []string
		for _, v := range c.values {
			blobs = append(blobs, base64.StdEncoding.EncodeToString([]byte("note: "))+"\n"+base64.StdEncoding.EncodeToString([]byte(v.value)))
		}
		leaky := strings.Replace(string(doc), `"events":`, `"blobs":`+encoder{}.encode(anySlice(blobs))+`,"events":`, 1)
		if _, err := s2.Sanitize([]byte(leaky), name); !errors.Is(err, ErrLeak) {
			t.Fatalf("%s with base64 values: %v; want a refusal", name, err)
		} else {
			b, _ := json.Marshal(err.(*LeakError).Hits)
			refusals = append(refusals, err.Error(), string(b))
		}
	}
	report, _ := json.Marshal(s2.Report())
	if len(s2.Report().Paths) < 20 {
		t.Fatalf("the report has %d paths", len(s2.Report().Paths))
	}
	refusals = append(refusals, string(report))
	side, _ := json.Marshal(refusals)
	for _, left := range survivors(side, c.values) {
		t.Errorf("a report or message holds %s", left)
	}
}

var anyEmail = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`)

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// FuzzPlantedValue plants a learned value, in a form and an encoding the
// fuzzer picks, at a depth it picks, between texts it picks, and holds the
// sanitizer to its promise: the output is refused, or holds the value in
// no form.
func FuzzPlantedValue(f *testing.F) {
	p := loadPlanted(f)
	f.Add(uint64(0), "thx ", "!")
	f.Add(uint64(7), "\u003c", "\u003e")
	f.Add(uint64(42), "C:\\Users\\", "_401.png")
	f.Add(uint64(99), "%2F", "%2F")
	f.Add(uint64(1234), "\n", "\u00a0")
	f.Fuzz(func(t *testing.T, seed uint64, before, after string) {
		rng := rand.New(rand.NewPCG(seed, seed>>32|1))
		who := p.People[rng.IntN(len(p.People))]
		values := []plantedValue{{class: "name", value: who.Name}, {class: "email", value: who.Email}, {class: "handle", value: who.Handle}}
		if who.ID != "" {
			values = append(values, plantedValue{class: "slack id", value: who.ID})
		}
		for _, part := range strings.Fields(who.Name) {
			values = append(values, plantedValue{class: "name part", value: part, verbatim: englishWordForTest(strings.ToLower(part))})
		}
		v := values[rng.IntN(len(values))]
		text := v.value
		switch rng.IntN(6) {
		case 1:
			text = variants(text)[rng.IntN(6)]
		case 2:
			text = html.EscapeString(text)
		case 3:
			text = url.QueryEscape(text)
		}
		text = before + text + after
		encoders := []encoder{{name: "go", html: true}, {name: "python", ascii: true, spaced: true}, {name: "js"}, {name: "slashes", slash: true}}
		var node any = text
		for range rng.IntN(4) {
			node = encoders[rng.IntN(len(encoders))].encode(obj{{"text", node}})
		}
		doc := obj{{"version", 1}, {"surface", "slack"}, {"identities", []any{identityObj(p, who)}},
			{"events", []any{obj{{"createdAtMs", 1}, {"historyVersion", 0}, {"payload", obj{{"message", node}}}, {"schemaVersion", 2}, {"seq", 0}, {"type", "tool_result"}}}}}
		in := []byte(encoders[rng.IntN(len(encoders))].encode(doc))
		s, err := New(Options{Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Sanitize(in, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrLeak) && !errors.Is(err, history.ErrInvalid) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		if left := survivors(out, values); len(left) > 0 {
			t.Fatalf("%v survived in\n%s\nfrom\n%s", left, out, in)
		}
	})
}
