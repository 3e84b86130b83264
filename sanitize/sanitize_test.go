package sanitize

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

var testKey = []byte("agentvcr-test-key-0123456789abcd")

// recording writes a Slack recording with the given identities and rows.
func recording(t testing.TB, ids []history.Identity, rows ...history.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	rec := &history.Recording{Header: history.Header{Version: 1, Surface: history.SurfaceSlack,
		Exporter:   &history.Exporter{Tool: "agentvcr", Profile: "junior", ConversationID: "slack:C0CHAN0001:1790000001.000100"},
		Identities: ids}, Events: rows}
	if err := history.Write(&buf, rec); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func row(seq int64, typ string, payload any) history.Event {
	return history.Event{Seq: seq, Type: typ, SchemaVersion: 1, CreatedAtMs: 1790000000000 + seq, Payload: []byte(v2(payload))}
}

// v2 encodes a model message as schema-version-2 rows hold it, and as
// Junior writes JSON: without HTML escapes.
func v2(msg any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func sanitize(t testing.TB, in []byte, opts Options) string {
	t.Helper()
	if opts.Key == nil {
		opts.Key = testKey
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize(in, "test.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := history.Read(bytes.NewReader(out), "out"); err != nil {
		t.Fatalf("output is not valid recorded history: %v", err)
	}
	return string(out)
}

// person is a Slack identity as export --with-identities writes it.
func identity(id, user, name, handle, email string) history.Identity {
	return history.Identity{ID: id, Kind: "user", Provider: "slack", ProviderTenantID: "T0TEAM0001", ProviderSubjectID: user,
		DisplayName: &name, Handle: &handle, Email: &email, EmailNormalized: &email}
}

var ada = identity("11111111-1111-4111-8111-111111111111", "U0ADA00001", "Ada Quill", "ada.quill", "ada.quill@corp.io")

func slackAuthor(user, name, handle string, bot bool) map[string]any {
	return map[string]any{"fullName": name, "isBot": bot, "userId": user, "userName": handle}
}

func TestReplacesWhatJuniorsSanitizerReplaces(t *testing.T) {
	web := row(0, "message", map[string]any{"messageId": "api-msg:1", "role": "user", "text": "hi",
		"authorIdentityId": "22222222-2222-4222-8222-222222222222",
		"meta":             map[string]any{"author": map[string]any{"email": "Cy.Ledger@Corp.io", "userId": "dashboard:4f1c9a0b2d3e", "userName": "Cy Ledger"}}})
	slack := row(1, "message", map[string]any{"messageId": "1790000001.000100", "role": "user", "text": "deploy?",
		"meta": map[string]any{"author": slackAuthor("U0ADA00001", "Ada Quill", "ada.quill", false), "slackTs": "1790000001.000100"}})
	bot := row(2, "message", map[string]any{"messageId": "turn_x:assistant:1", "role": "assistant", "text": "done",
		"meta": map[string]any{"author": map[string]any{"isBot": true, "userName": "junior-example"}}})
	ctx := row(3, "user_message", map[string]any{"provenance": map[string]any{"authority": "context"},
		"message": v2(map[string]any{"content": []any{map[string]any{"type": "text",
			"text": "<context>\n<actor>\n- user_name: Ada Quill\n- full_name: Ada Quill\n- user_id: U0ADA00001\n</actor>\n</context>"}}})})
	instr := row(4, "user_message", map[string]any{"provenance": map[string]any{"authority": "instruction",
		"actor": map[string]any{"platform": "slack", "teamId": "T0TEAM0001", "userId": "W0ADA00002", "userName": "ada.quill", "fullName": "Ada Quill", "email": "ada.quill@corp.io"}},
		"message": v2(map[string]any{"content": []any{map[string]any{"type": "text", "text": "<current-instruction>\ndeploy?\n</current-instruction>"}}})})
	in := recording(t, nil, web, slack, bot, ctx, instr)
	out := sanitize(t, in, Options{})

	for _, gone := range []string{"Cy.Ledger@Corp.io", "cy.ledger@corp.io", "dashboard:4f1c9a0b2d3e", "Cy Ledger", "T0TEAM0001",
		"U0ADA00001", "W0ADA00002", "Ada Quill", "ada.quill", "22222222-2222-4222-8222-222222222222"} {
		if strings.Contains(strings.ToLower(out), strings.ToLower(gone)) {
			t.Errorf("%q survived", gone)
		}
	}
	for _, kept := range []string{`"userName": "junior-example"`, `"slackTs": "1790000001.000100"`, "<current-instruction>"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s was changed", kept)
		}
	}
	rec, err := history.Read(strings.NewReader(out), "")
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string]*regexp.Regexp{
		"payload.meta.author.email":  regexp.MustCompile(`^[a-z]+\.[a-z]+@example\.com$`),
		"payload.meta.author.userId": regexp.MustCompile(`^dashboard:[0-9a-f]{12}$`),
		"payload.authorIdentityId":   regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`),
	}
	for path, re := range shapes {
		if v := get(t, rec.Events[0].Payload, path); !re.MatchString(v) {
			t.Errorf("%s = %q; want the shape %s", path, v, re)
		}
	}
	if v := get(t, rec.Events[1].Payload, "payload.meta.author.userId"); !regexp.MustCompile(`^U[0-9][0-9A-Z]{8}$`).MatchString(v) {
		t.Errorf("Slack user id became %q; want U and 9 more", v)
	}
	if v := get(t, rec.Events[1].Payload, "payload.meta.author.fullName"); !regexp.MustCompile(`^\S+ \S+$`).MatchString(v) {
		t.Errorf("full name became %q; want a first and last name", v)
	}
	inner := get(t, rec.Events[3].Payload, "payload.message")
	if !json.Valid([]byte(inner)) || !strings.Contains(inner, "user_name: ") || strings.Contains(inner, "Ada") {
		t.Errorf("nested message %s", inner)
	}
}

// get reads a string at a dotted path of a row (paths start at "payload").
func get(t *testing.T, payload json.RawMessage, path string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(strings.TrimPrefix(path, "payload."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: not an object at %s", path, k)
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

func TestReplacesWhatJuniorsSanitizerMisses(t *testing.T) {
	text := func(seq int64, s string) history.Event {
		return row(seq, "message", map[string]any{"messageId": fmt.Sprint(seq), "role": "user", "text": s})
	}
	tests := []struct {
		name  string
		ids   []history.Identity
		rows  []history.Event
		gone  []string
		shape *regexp.Regexp // what must now stand in the output
	}{
		{"channel and DM ids", nil, []history.Event{text(0, "see <#C0CHAN0002|incidents> and D0DM000003, G0PRIV0004")},
			[]string{"C0CHAN0002", "D0DM000003", "G0PRIV0004", "incidents"}, regexp.MustCompile(`<#C[0-9A-Z]{9}\|channel-[0-9a-f]{6}>`)},
		{"thread conversation ids", nil, []history.Event{text(0, "forked from slack:C0CHAN0001:1790000001.000100")},
			[]string{"C0CHAN0001"}, regexp.MustCompile(`slack:C[0-9A-Z]{9}:1790000001\.000100`)},
		{"author_name attributes, XML-escaped", []history.Identity{identity("id-1", "U0OBR00001", "Siobhan O'Brien", "sob", "sob@corp.io")},
			[]history.Event{row(0, "user_message", map[string]any{"message": v2(map[string]any{"content": []any{map[string]any{"type": "text",
				"text": `<current-instruction author_id="U0OBR00001" author_name="Siobhan O&#39;Brien">hi</current-instruction>`}}})})},
			[]string{"Siobhan", "O&#39;Brien", "O'Brien", "U0OBR00001"}, regexp.MustCompile(`author_name=\\\\\\"[A-Z][a-z]+ [A-Z][a-z]+\\\\\\"`)},
		{"@name mentions", []history.Identity{ada}, []history.Event{text(0, "thanks @ada.quill, and @U0ADA00001")},
			[]string{"ada.quill", "U0ADA00001"}, regexp.MustCompile(`thanks @[a-z]+\.[a-z]+, and @U[0-9A-Z]{9}`)},
		{"enterprise, bot, app and file ids", nil, []history.Event{text(0, "E0ENTR0001 B0BOT00001 A0APP00001 F0FILE0001 S0GROUP001")},
			[]string{"E0ENTR0001", "B0BOT00001", "A0APP00001", "F0FILE0001", "S0GROUP001"}, regexp.MustCompile(`E[0-9A-Z]{9} B[0-9A-Z]{9} A[0-9A-Z]{9} F[0-9A-Z]{9} S[0-9A-Z]{9}`)},
		{"workspace and file URLs", nil, []history.Event{text(0, "https://acme-corp.slack.com/archives/C0CHAN0001/p1790000001000100 and https://files.slack.com/files-pri/T0TEAM0001-F0FILE0001/plan.png")},
			[]string{"acme-corp", "C0CHAN0001", "T0TEAM0001", "F0FILE0001"}, regexp.MustCompile(`https://[a-z]+-[0-9a-f]{6}\.slack\.com/archives/C[0-9A-Z]{9}/p1790000001000100 and https://files\.slack\.com/files-pri/T[0-9A-Z]{9}-F[0-9A-Z]{9}/plan\.png`)},
		{"names in free text from the identity dictionary", []history.Identity{ada}, []history.Event{text(0, "Ada said Quill's fix is in. ADA QUILL approves; Adam and Canada stay.")},
			[]string{"Ada said", "Quill's", "ADA QUILL"}, regexp.MustCompile(`[A-Z][a-z]+ said [A-Z][a-z]+'s fix is in\. [A-Z]+ [A-Z]+ approves; Adam and Canada stay\.`)},
		{"names from a --names dictionary", nil, []history.Event{text(0, "Priya owns the launch")}, []string{"Priya"}, regexp.MustCompile(`[A-Z][a-z]+ owns the launch`)},
		{"Slack markup labels", nil, []history.Event{text(0, "<@U0ZED00001|zed> and <@U0ZED00001|Zed Alder> and <!subteam^S0GROUP001|@oncall>")},
			[]string{"zed", "Zed Alder", "oncall", "U0ZED00001"}, regexp.MustCompile(`<@U[0-9A-Z]{9}\|[a-z]+> and <@U[0-9A-Z]{9}\|[A-Z][a-z]+ [A-Z][a-z]+> and <!subteam\^S[0-9A-Z]{9}\|@[a-z]+>`)},
		{"emails not in any field", nil, []history.Event{text(0, "mail <mailto:zed@corp.io|zed@corp.io>, cc test@example.com")},
			[]string{"zed@corp.io"}, regexp.MustCompile(`<mailto:[a-z]+@example\.com\|[a-z]+@example\.com>, cc test@example\.com`)},
		{"phone numbers and IP addresses", nil, []history.Event{text(0, "call +1 415 555 0199 or (030) 123-4567 from 84.17.5.201; not 127.0.0.1, ts 1790000001.000100, v1.2.3")},
			[]string{"415 555 0199", "123-4567", "84.17.5.201"}, regexp.MustCompile(`call \+\d \d{3} \d{3} \d{4} or \(\d{3}\) \d{3}-\d{4} from (192\.0\.2|198\.51\.100|203\.0\.113)\.\d+; not 127\.0\.0\.1, ts 1790000001\.000100, v1\.2\.3`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{}
			if strings.Contains(tt.name, "--names") {
				opts.Names = []string{"Priya Raman"}
			}
			out := sanitize(t, recording(t, tt.ids, tt.rows...), opts)
			for _, g := range tt.gone {
				if strings.Contains(out, g) {
					t.Errorf("%q survived", g)
				}
			}
			if !tt.shape.MatchString(out) {
				t.Errorf("output lacks %s:\n%s", tt.shape, eventsOf(out))
			}
		})
	}
}

func eventsOf(out string) string {
	if i := strings.Index(out, `"events"`); i >= 0 {
		return out[i:]
	}
	return out
}

func TestSecretsBecomePlaceholders(t *testing.T) {
	// Built at test time from the shapes, never real tokens.
	tokens := map[string]string{
		"slack-token":     "xoxb-" + strings.Repeat("1", 12) + "-" + strings.Repeat("2", 13) + "-" + strings.Repeat("a", 24),
		"slack-app-token": "xapp-1-A0" + strings.Repeat("B", 10) + "-" + strings.Repeat("3", 13),
		"slack-webhook":   "https://hooks.slack.com/services/T0" + strings.Repeat("X", 8) + "/B0" + strings.Repeat("Y", 8) + "/" + strings.Repeat("z", 24),
		"anthropic-key":   "sk-ant-api03-" + strings.Repeat("q", 93) + "AA",
		"openai-key":      "sk-proj-" + strings.Repeat("r", 40),
		"github-token":    "ghp_" + strings.Repeat("s", 36),
		"github-pat":      "github_pat_" + strings.Repeat("t", 82),
		"aws-access-key":  "AKIA" + strings.Repeat("U", 16),
		"jwt":             "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0." + strings.Repeat("v", 43),
		"private-key":     "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + strings.Repeat("w", 60) + "\n-----END RSA PRIVATE KEY-----",
	}
	var rows []history.Event
	seq := int64(0)
	for rule, tok := range tokens {
		rows = append(rows, row(seq, "tool_result", map[string]any{"message": v2(map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "env: TOKEN=" + tok + " (" + rule + ")"}}})}))
		seq++
	}
	out := sanitize(t, recording(t, nil, rows...), Options{})
	for rule, tok := range tokens {
		if strings.Contains(out, tok) || strings.Contains(out, strings.ReplaceAll(tok, "\n", `\\n`)) {
			t.Errorf("%s survived", rule)
		}
		if !regexp.MustCompile(`\(`+rule+`\)`).MatchString(out) || strings.Count(out, "[redacted ") < len(tokens) {
			t.Errorf("no placeholder for %s", rule)
		}
	}
	if got := secrets.First(out); got != "" {
		t.Errorf("output still has a %s shape", got)
	}
	if findings, err := checkFile([]byte(out), "out"); err != nil || len(findings) != 0 {
		t.Errorf("check of the output: %v, %v", findings, err)
	}
}

func TestDeterministicPerKey(t *testing.T) {
	bo := identity("33333333-3333-4333-8333-333333333333", "U0BO000002", "Bo Rivet", "bo.rivet", "bo.rivet@corp.io")
	msg := func(seq int64, who history.Identity) history.Event {
		return row(seq, "message", map[string]any{"messageId": fmt.Sprint(seq), "role": "user", "text": *who.DisplayName + " was here",
			"meta": map[string]any{"author": slackAuthor(who.ProviderSubjectID, *who.DisplayName, *who.Handle, false), "email": *who.Email}})
	}
	fileA := recording(t, []history.Identity{ada, bo}, msg(0, ada), msg(1, bo))
	fileB := recording(t, []history.Identity{ada}, msg(7, ada))

	runA1 := sanitize(t, fileA, Options{Key: testKey})
	runA2 := sanitize(t, fileA, Options{Key: testKey})
	if runA1 != runA2 {
		t.Fatal("two runs with one key differ")
	}
	fake := func(out string, seq int) string {
		rec, err := history.Read(strings.NewReader(out), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range rec.Events {
			if e.Seq == int64(seq) {
				return string(e.Payload)
			}
		}
		t.Fatalf("no seq %d", seq)
		return ""
	}
	runB := sanitize(t, fileB, Options{Key: testKey})
	if a, b := fake(runA1, 0), fake(runB, 7); strings.Replace(a, `"messageId": "0"`, `"messageId": "7"`, 1) != b {
		t.Fatalf("one person, two files, one key, two fakes:\n%s\n%s", a, b)
	}
	other := sanitize(t, fileA, Options{Key: []byte("another-key-0123456789abcdef0123")})
	if fake(other, 0) == fake(runA1, 0) {
		t.Fatal("another key gave the same fakes")
	}
}

func TestGoldenMappings(t *testing.T) {
	// Pinned so that a gofakeit upgrade that moves every fixture fails here
	// first. Update deliberately, with the fixtures.
	fk := newFaker(testKey, nil)
	tests := []struct {
		kind Kind
		in   string
		want string
	}{
		{KindName, "Ada Quill", "Abby Sandoval"},
		{KindFirstName, "Ada", "Abby"},
		{KindEmail, "ada.quill@corp.io", "abby.sandoval@example.com"},
		{KindHandle, "ada.quill", "abby.sandoval"},
		{KindSlackID, "U0ADA00001", "U8NM6LN97V"},
		{KindDashboardID, "dashboard:4f1c9a0b2d3e", "dashboard:5501800cb293"},
	}
	for _, tt := range tests {
		if got := fk.fake(tt.kind, tt.in); got != tt.want {
			t.Errorf("fake(%s, %q) = %q; want %q", tt.kind, tt.in, got, tt.want)
		}
	}
}

func TestNestedJSONAtAnyDepth(t *testing.T) {
	inner := v2(map[string]any{"note": "reach me at zed@corp.io"})
	middle := v2(map[string]any{"toolName": "read", "content": []any{map[string]any{"type": "text", "text": inner}}})
	in := recording(t, nil, row(0, "tool_result", map[string]any{"message": middle}))
	out := sanitize(t, in, Options{})
	if strings.Contains(out, "zed@corp.io") {
		t.Fatal("an email two JSON documents deep survived")
	}
	if !strings.Contains(out, `example.com`) {
		t.Fatalf("no fake email:\n%s", eventsOf(out))
	}
}

func TestRewritesRightAfterAnEscape(t *testing.T) {
	// A handle that starts with n, in a Windows path, stands right after
	// an escaped backslash, twice escaped in a nested document: \\nadia
	// in the raw bytes. Decoded first, it is a word like any other.
	nadia := identity("55555555-5555-4555-8555-555555555555", "U0NAD00001", "Nadia Quill", "nadia.quill", "nadia@corp.io")
	in := recording(t, []history.Identity{ada, nadia},
		row(0, "message", map[string]any{"messageId": "1", "role": "user", "text": "hi"}),
		row(3, "tool_result", map[string]any{"toolCallId": "c1", "message": v2(map[string]any{
			"path": `C:\Users\nadia.quill\Desktop`, "other": `C:\Users\ada.quill`})}))
	out := sanitize(t, in, Options{})
	if strings.Contains(out, "nadia") || strings.Contains(out, "ada.quill") || !strings.Contains(out, `C:\\\\Users\\\\`) {
		t.Fatalf("paths:\n%s", eventsOf(out))
	}
}

func TestRewritesInsideBase64(t *testing.T) {
	// A JSON document as base64 in a tool result: decoded, rewritten as
	// text, and encoded again in the same alphabet and padding.
	nadia := identity("55555555-5555-4555-8555-555555555555", "U0NAD00001", "Nadia Quill", "nadia.quill", "nadia@corp.io")
	blob := base64.StdEncoding.EncodeToString([]byte(`{"note": "ask Nadia Quill about it"}`))
	in := recording(t, []history.Identity{nadia},
		row(0, "message", map[string]any{"messageId": "1", "role": "user", "text": "hi"}),
		row(3, "tool_result", map[string]any{"toolCallId": "c1", "message": v2(map[string]any{"data": blob})}))
	out := sanitize(t, in, Options{})
	var rec struct {
		Events []struct {
			Payload struct{ Message string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatal(err)
	}
	var msg struct{ Data string }
	if err := json.Unmarshal([]byte(rec.Events[1].Payload.Message), &msg); err != nil {
		t.Fatal(err)
	}
	dec, err := base64.StdEncoding.Strict().DecodeString(msg.Data)
	if err != nil {
		t.Fatalf("the blob is no longer padded standard base64: %v", err)
	}
	var note struct{ Note string }
	if err := json.Unmarshal(dec, &note); err != nil || strings.Contains(string(dec), "Nadia") || strings.Contains(string(dec), "Quill") || !strings.HasPrefix(note.Note, "ask ") {
		t.Fatalf("decoded blob %q (%v); want the note with a fake name", dec, err)
	}
}

func TestRefusesWhatItCannotRewrite(t *testing.T) {
	// A run of base64 shorter than the rewrite reads (12 characters: "hi
	// Nadia!"); the leak check reads it, finds the learned name inside,
	// and nothing is written.
	nadia := identity("55555555-5555-4555-8555-555555555555", "U0NAD00001", "Nadia Quill", "nadia.quill", "nadia@corp.io")
	blob := base64.StdEncoding.EncodeToString([]byte(`hi Nadia!`))
	in := recording(t, []history.Identity{nadia},
		row(0, "message", map[string]any{"messageId": "1", "role": "user", "text": "hi"}),
		row(3, "tool_result", map[string]any{"toolCallId": "c1", "message": v2(map[string]any{"data": blob})}))
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize(in, "blob.json")
	var leak *LeakError
	if !errors.As(err, &leak) || !errors.Is(err, ErrLeak) || out != nil {
		t.Fatalf("Sanitize = %d bytes, %v; want no output and a LeakError", len(out), err)
	}
	if leak.Hits[0].Seq != 3 || leak.Hits[0].Digest == "" || leak.Hits[0].Path != "tool_result.payload.message>data" {
		t.Fatalf("hits %+v; want the name in row 3 at tool_result.payload.message>data", leak.Hits)
	}
}

func TestNumbersAreReachedToo(t *testing.T) {
	// A learned phone number that also stands as a JSON number is
	// replaced there too: the rewrite works on the raw bytes.
	rules := DefaultRules()
	rules.Merge(&Rules{Events: map[string][]Rule{"tool_result": {{Path: "payload.owner", Kind: RuleKind(KindPhone)}}}})
	in := recording(t, nil, row(3, "tool_result", map[string]any{"count": json.Number("4155550199"), "owner": "4155550199"}))
	out := sanitize(t, in, Options{Rules: rules})
	if strings.Contains(out, "4155550199") || !strings.Contains(out, `"count": `) {
		t.Fatalf("the number survived:\n%s", eventsOf(out))
	}
}

func TestVerifyCatchesAMissedReplacement(t *testing.T) {
	// The leak check does not trust the rewrite: run it on the input, as if
	// the rewrite had done nothing.
	conv, _ := juniortest.SlackThread()
	in := recording(t, conv.Identities, conv.Events[:8]...)
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Learn(in, "x"); err != nil {
		t.Fatal(err)
	}
	s.dict.build(s.fk)
	hits := s.verify(string(in), in)
	kinds := map[string]bool{}
	for _, h := range hits {
		kinds[h.Kind] = true
	}
	for _, k := range []Kind{KindName, KindEmail, KindSlackID, KindHandle, KindIdentityID} {
		if !kinds[string(k)] {
			t.Errorf("no %s hit in unsanitized input; hits %v", k, kinds)
		}
	}
}

func TestRefusesStampedUnlessForced(t *testing.T) {
	conv, _ := juniortest.WebLaunch()
	once := sanitize(t, recording(t, conv.Identities, conv.Events[:5]...), Options{})
	s, _ := New(Options{Key: testKey})
	if _, err := s.Sanitize([]byte(once), "once.json"); !errors.Is(err, ErrStamped) {
		t.Fatalf("error %v; want ErrStamped", err)
	}
	twice := sanitize(t, []byte(once), Options{Force: true})
	if strings.Count(twice, `"sanitizer"`) != 1 {
		t.Fatalf("stamped twice:\n%s", twice[:400])
	}
}

func TestUntouchedBytesStayIdentical(t *testing.T) {
	path := filepath.Join("testdata", "launch-planning.json")
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := sanitize(t, in, Options{})
	inLines, outLines := strings.Split(string(in), "\n"), strings.Split(out, "\n")
	stamp := 0
	for i, j := 0, 0; i < len(inLines); i, j = i+1, j+1 {
		if strings.Contains(outLines[j], `"exporter": {"sanitizer"`) {
			j++
			stamp++
		}
		personal := strings.Contains(inLines[i], "person1") || strings.Contains(inLines[i], "Person 1")
		if !personal && inLines[i] != outLines[j] {
			t.Fatalf("line %d changed although it holds nothing personal:\n-%s\n+%s", i+1, inLines[i], outLines[j])
		}
		if personal && inLines[i] == outLines[j] {
			t.Errorf("line %d kept its personal value: %s", i+1, inLines[i])
		}
	}
	if stamp != 1 || len(outLines) != len(inLines)+1 {
		t.Fatalf("%d stamp lines, %d lines for %d", stamp, len(outLines), len(inLines))
	}
}

func TestCheck(t *testing.T) {
	path := filepath.Join("testdata", "launch-planning.json")
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	found, err := checkFile(in, path)
	if err != nil || len(found) != 1 || found[0].Path != "exporter.sanitizer" {
		t.Fatalf("checkFile(unsanitized) = %+v, %v; want the missing stamp", found, err)
	}
	if found, err := checkFile([]byte(sanitize(t, in, Options{})), "out"); err != nil || len(found) != 0 {
		t.Fatalf("checkFile(sanitized) = %+v, %v; want nothing", found, err)
	}
	leaky := recording(t, nil, row(4, "tool_result", map[string]any{"message": v2(map[string]any{"text": "ping zed@corp.io with ghp_" + strings.Repeat("x", 36)})}))
	found, err = checkFile(leaky, "leaky.json")
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, f := range found {
		problems = append(problems, fmt.Sprintf("%d %s %s", f.Seq, f.Path, f.Problem))
	}
	want := []string{
		"-1 exporter.sanitizer no sanitizer stamp: run sanitize on the raw export before committing it",
		"-1 exporter.conversationId Slack id that is not a sanitizer fake",
		"4 tool_result.payload.message>text email address outside the reserved domains (example.com, .example, .test, .invalid)",
		"4 tool_result.payload.message>text secret shape: github-token",
	}
	if strings.Join(problems, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(fmt.Sprint(found), "zed@corp.io") {
		t.Fatal("a finding holds the value")
	}
}

func TestBadInputAndOptions(t *testing.T) {
	if _, err := New(Options{Key: []byte("short")}); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("short key: %v", err)
	}
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"malformed":     `{"version":1,`,
		"wrong version": `{"version":2,"surface":"web","events":[]}`,
		"no events":     `{"version":1,"surface":"web"}`,
		"bad row":       `{"version":1,"surface":"web","events":[{"seq":"1","type":"x","payload":{}}]}`,
	} {
		if _, err := s.Sanitize([]byte(in), name); !errors.Is(err, history.ErrInvalid) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v; want ErrInvalid naming the file", name, err)
		}
	}
	for name, rules := range map[string]string{
		"unknown key":  `{"version":1,"evnts":{}}`,
		"unknown kind": `{"version":1,"document":[{"path":"a","kind":"ssn"}]}`,
		"query path":   `{"version":1,"document":[{"path":"a.#(b==1)","kind":"email"}]}`,
		"version":      `{"version":2}`,
	} {
		if _, err := ParseRules(strings.NewReader(rules), "r.json"); err == nil || !strings.Contains(err.Error(), "r.json") {
			t.Errorf("rules with %s: %v", name, err)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	conv, _ := juniortest.SlackThread()
	f.Add(recording(f, conv.Identities, conv.Events[:12]...))
	f.Add([]byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"<@U0ADA00001|x> a@b.co"}}]}`))
	f.Add([]byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"x","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"m":"{\"a\":\"\\u00e9 U0ADA00001\"}"}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := New(Options{Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Sanitize(in, "fuzz")
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q:\n%s", in, out)
		}
		if found, err := checkFile(out, "fuzz"); err != nil {
			t.Fatalf("output is not recorded history: %v", err)
		} else {
			for _, fd := range found {
				if strings.HasPrefix(fd.Problem, "secret") {
					t.Fatalf("secret survived: %+v", fd)
				}
			}
		}
	})
}

// checkFile is the leak check of a file in git, with the junior
// profile's rules.
func checkFile(doc []byte, file string) ([]leakcheck.Finding, error) {
	return leakcheck.Check(doc, file, DefaultRules().LeakRules())
}
