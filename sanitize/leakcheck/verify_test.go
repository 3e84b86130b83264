package leakcheck

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/brianvoe/gofakeit/v7/data"
)

// awsSecret has the shape of an AWS secret access key: never a real one.
const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz012345678"

// leakDoc is a stamped document whose rows are tool results with the
// given payloads (JSON), seq 0, 1, ...
func leakDoc(payloads ...string) string {
	rows := make([]string, len(payloads))
	for i, p := range payloads {
		rows[i] = fmt.Sprintf(`{"seq":%d,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":%s}`, i, p)
	}
	return `{"version":1,"surface":"web","exporter":{"sanitizer":{"tool":"agentvcr-sanitize"}},"events":[` + strings.Join(rows, ",") + `]}`
}

// textPayload is a payload holding text in a string.
func textPayload(text string) string {
	b, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// juniorRules are the exceptions of the junior profile's rules
// (sanitize/rules/junior.json), as a sanitizer of Junior's history hands
// them to the Checker.
var juniorRules = Rules{
	NotSecrets: []string{`\bapi-msg:[0-9a-f]{16,64}\b`},
	IDFields:   []string{"idempotencyKey", "authorIdentityId", "actorIdentityId", "identityId", "keyFingerprint"},
}

// newChecker is a Checker of the junior rules, as a sanitizer builds
// one, that knows no fake and has the values added.
func newChecker(t testing.TB, cfg Config, values ...Value) *Checker {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		c.Add(v)
	}
	return c
}

// verifyKinds runs a sanitizer's own leak check on doc as if the rewrite
// had written it, and returns the kinds it found.
func verifyKinds(t *testing.T, rules Rules, doc string) []string {
	t.Helper()
	c := newChecker(t, Config{Rules: rules, Issued: func(string, string) bool { return false }})
	var kinds []string
	for _, h := range c.Verify(doc, []byte(doc)) {
		kinds = append(kinds, h.Kind)
	}
	return kinds
}

// checkProblems runs Check on doc and returns its problems.
func checkProblems(t *testing.T, doc string) []string {
	t.Helper()
	found, err := Check([]byte(doc), "f.json", juniorRules)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, f := range found {
		problems = append(problems, f.Problem)
	}
	return problems
}

func hasKind(kinds []string, kind string) bool {
	return slices.ContainsFunc(kinds, func(k string) bool { return k == kind || strings.HasPrefix(k, kind) })
}

// leakCase is a value planted in a document the rewrite wrote: the leak
// check must find it (kind) or must not (kind "").
type leakCase struct {
	name    string
	payload string
	kind    string // what verify finds; "" for nothing
	check   string // what Check finds, as a problem's start; "" for nothing
}

func runLeakCases(t *testing.T, cases []leakCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := leakDoc(c.payload)
			kinds := verifyKinds(t, juniorRules, doc)
			switch {
			case c.kind == "" && len(kinds) > 0:
				t.Errorf("verify found %v; want nothing", kinds)
			case c.kind != "" && !hasKind(kinds, c.kind):
				t.Errorf("verify found %v; want %s", kinds, c.kind)
			}
			problems := checkProblems(t, doc)
			switch {
			case c.check == "" && len(problems) > 0:
				t.Errorf("Check found %v; want nothing", problems)
			case c.check != "" && !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, c.check) }):
				t.Errorf("Check found %v; want %q", problems, c.check)
			}
		})
	}
}

const emailProblem = "email address"

func TestLeakCheckFindsInternationalisedEmails(t *testing.T) {
	runLeakCases(t, []leakCase{
		{"punycode", textPayload("write to user@xn--e1afmkfd.xn--p1ai today"), "email", emailProblem},
		{"punycode with digits in the tld", textPayload("ops@xn--80ak6aa92e.xn--90ais"), "email", emailProblem},
		{"unicode", textPayload("write to user@пример.рф today"), "email", emailProblem},
		{"unicode in capitals", textPayload("USER@ПРИМЕР.РФ"), "email", emailProblem},
		{"percent-encoded", textPayload("mailto:" + url.QueryEscape("user@пример.рф")), "email", emailProblem},
		{"in base64", textPayload("b64 " + base64.StdEncoding.EncodeToString([]byte("owner: user@xn--e1afmkfd.xn--p1ai"))), "email", emailProblem},
		{"as a key", `{"user@xn--e1afmkfd.xn--p1ai": 1}`, "email", emailProblem},
		{"fake", textPayload("write to ada.quill@example.com"), "", ""},
		{"reserved", textPayload("user@host.test and user@example.org"), "", ""},
		{"not an email", textPayload("see xn--p1ai and a@b"), "", ""},
	})
}

const nameProblem = "a person's name"

func TestLeakCheckFindsUnlearnedNames(t *testing.T) {
	runLeakCases(t, []leakCase{
		{"given and surname", textPayload("ask Oskar Lindqvist about the budget"), "name", nameProblem},
		{"with an accent", textPayload("draft a note to Lucía Ferrer."), "name", nameProblem},
		{"decomposed accent", textPayload("draft a note to Luci\u0301a Ferrer."), "name", nameProblem},
		{"Cyrillic", textPayload("позвони Дмитрий Волков"), "name", nameProblem},
		{"Cyrillic, inflected", textPayload("напиши Ивану Петрову и Марии Ивановой"), "name", nameProblem},
		{"Greek", textPayload("ρώτα τον Γεώργιος Παπαδόπουλος"), "name", nameProblem},
		{"Greek, inflected", textPayload("ρώτα τον Γεώργιο Αλαφούζο"), "name", nameProblem},
		{"in a nested document", `{"result": "{\"note\":\"cc Amber Kowalski\"}"}`, "name", nameProblem},
		{"in a key", `{"Imogen Bakare": true}`, "name", nameProblem},
		{"fakes", textPayload(data.Person["first"][0] + " " + data.Person["last"][0] + " met Jordan Peterson, " + data.Person["last"][1] + " " + data.Person["first"][1]), "", ""},
		{"not title case", textPayload("ask oskar lindqvist, OSKAR LINDQVIST"), "", ""},
		{"two spaces", textPayload("Oskar  Lindqvist"), "", ""},
		{"second no surname", textPayload("Grant Access to Ruby Rails"), "", ""},
	})
}

func TestLeakCheckNamesFollowTheDetectorAndNotNames(t *testing.T) {
	doc := leakDoc(textPayload("ask Oskar Lindqvist, and the Amber Kowalski team"))
	off := juniorRules
	off.NoNames = true
	if kinds := verifyKinds(t, off, doc); len(kinds) != 0 {
		t.Errorf("with the detector off, verify found %v", kinds)
	}
	if problems := checkProblems(t, strings.Replace(doc, `"tool":"agentvcr-sanitize"`, `"tool":"agentvcr-sanitize","detectNames":false`, 1)); len(problems) != 0 {
		t.Errorf("the stamp says the detector was off, Check found %v", problems)
	}
	product := juniorRules
	product.NotNames = []string{"the  AMBER kowalski team"}
	kinds := verifyKinds(t, product, doc)
	if n := strings.Count(strings.Join(kinds, " "), "name"); n != 1 {
		t.Errorf("with Amber Kowalski a product, verify found %v; want one name", kinds)
	}
}

func TestLeakCheckFindsPhonesByTheirMember(t *testing.T) {
	runLeakCases(t, []leakCase{
		{"number", `{"phone": 4915112345670}`, "phone", "phone number"},
		{"string", `{"mobile": "4915112345670"}`, "phone", "phone number"},
		{"camel case", `{"contact": {"phoneNumber": "+1 415 555 2671"}}`, "phone", "phone number"},
		{"snake case", `{"phone_number": 14155552671}`, "phone", "phone number"},
		{"whatsapp", `{"WhatsApp": "+447911123456"}`, "phone", "phone number"},
		// Invalid for libphonenumber: the Sanitizer's own check finds it (it
		// is no fake it wrote); Check, without the key, takes it for one.
		{"local, invalid", `{"tel": 5550199}`, "phone", ""},
		{"fax, invalid", `{"fax": "030 1234567"}`, "phone", ""},
		{"short", `{"phone": 123456}`, "", ""},
		{"not a phone", `{"phone": "ask at the desk"}`, "", ""},
		{"another member", `{"count": 5550199}`, "", ""},
	})
}

func TestLeakCheckAsksWhichFakesItsSanitizerWrote(t *testing.T) {
	// Fakes of these kinds keep their shape: only the sanitizer's record
	// of what it wrote tells them from originals. A fake phone fails
	// libphonenumber's check, so only its member's name makes it one.
	wrote := map[string]string{"phone": "030 1234567", "date_of_birth": "1971-05-12", "passport": "X7710245"}
	var asked []string
	issued := func(kind, v string) bool {
		asked = append(asked, kind)
		return wrote[kind] == v
	}
	c := newChecker(t, Config{Rules: juniorRules, Issued: issued})
	doc := leakDoc(`{"phone": "030 1234567"}`, textPayload("DOB: 1971-05-12, passport X7710245"))
	if hits := c.Verify(doc, []byte(doc)); len(hits) != 0 {
		t.Fatalf("fakes the sanitizer wrote are hits: %+v", hits)
	}
	for kind := range wrote {
		if !slices.Contains(asked, kind) {
			t.Errorf("the Checker never asked about a %s", kind)
		}
	}
	other := leakDoc(`{"phone": "030 7654321"}`, textPayload("DOB: 1980-01-02, passport X1234567"))
	if kinds := kindsOf(c.Verify(other, []byte(other))); !hasKind(kinds, "phone") || !hasKind(kinds, "date_of_birth") || !hasKind(kinds, "passport") {
		t.Fatalf("values it did not write: %v; want a phone, a date of birth and a passport", kinds)
	}
}

func kindsOf(hits []Hit) []string {
	var kinds []string
	for _, h := range hits {
		kinds = append(kinds, h.Kind)
	}
	return kinds
}

func TestLeakCheckFindsCredentialDocuments(t *testing.T) {
	sa := func(keyID, key, clientID, email string) string {
		return fmt.Sprintf(`{"type": "service_account", "project_id": "acme-prod", "private_key_id": %q, "private_key": %q, "client_email": %q, "client_id": %q, "auth_uri": "https://accounts.google.com/o/oauth2/auth"}`,
			keyID, key, email, clientID)
	}
	real := sa("3f0b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d", "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n", "104857392017465839201", "deployer@acme-prod.iam.gserviceaccount.com")
	redacted := sa("[redacted gcp-key-id 0a1b2c3d]", "[redacted private-key 1a2b3c4d]", "[redacted learned 2a3b4c5d]", "deployer@example.com")
	idOnly := sa("3f0b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d", "[redacted private-key 1a2b3c4d]", "[redacted learned 2a3b4c5d]", "deployer@example.com")
	quoted, _ := json.Marshal(idOnly)
	ini := "[default]\naws_access_key_id = [redacted aws-access-token 0a1b2c3d]\naws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCY0123456789ab\n"
	const secret = "secret shape"
	runLeakCases(t, []leakCase{
		{"service account", real, "secret:", secret},
		{"service account key id only", idOnly, "secret:gcp-service-account", secret},
		{"service account in a string", `{"content": ` + string(quoted) + `}`, "secret:gcp-service-account", secret},
		{"service account as text", textPayload("here is the key: " + idOnly[:len(idOnly)-1]), "secret:gcp-service-account", secret},
		{"service account in base64", textPayload(base64.StdEncoding.EncodeToString([]byte(idOnly))), "secret:gcp-service-account", secret},
		{"service account redacted", redacted, "", ""},
		{"not a service account", `{"type": "user", "client_id": "104857392017465839201"}`, "", ""},
		{"aws credentials file", textPayload(ini), "secret:aws-credentials-file", secret},
		{"aws environment", textPayload("export AWS_SESSION_TOKEN=FwoGZXIvYXdzEBYaDH7example"), "secret:aws-credentials-file", secret},
		{"aws credentials file redacted", textPayload("[default]\naws_access_key_id = [redacted aws-access-token 0a1b2c3d]\naws_secret_access_key = [redacted learned 1a2b3c4d]\n"), "", ""},
		{"aws keys as members", `{"aws_secret_access_key": "notsecret-but-not-redacted"}`, "secret:aws-credentials-file", secret},
	})
}

func TestLeakCheckFindsSecretsByTheirContext(t *testing.T) {
	const secret = "secret shape"
	runLeakCases(t, []leakCase{
		{"aws key pair over lines", textPayload("key: [redacted aws-access-token 0a1b2c3d]\n\nsecret:\n" + awsSecret), "secret:aws-secret-access-key", secret},
		{"aws key pair after the key id", textPayload("AKIAZ7Q2M4X9B3C5D6E7 then\n" + awsSecret), "secret:aws-secret-access-key", secret},
		{"aws secret too far", textPayload("[redacted aws-access-token 0a1b2c3d]\n1\n2\n3\n4\n" + awsSecret), "", ""},
		{"git sha after a key id", textPayload("[redacted aws-access-token 0a1b2c3d] at 9fceb02d0ae598e95dc970b74767f19372d61af8"), "", ""},
		{"curl -u", textPayload("curl -u someone@example.com:Pa55word! https://api.example.com"), "secret:curl-user-password", secret},
		{"curl --user quoted", textPayload(`curl -s --user "ci:hunter2 or so" https://x.example`), "secret:curl-user-password", secret},
		{"curl -u, gitleaks' shape", textPayload("curl -uadmin:S3cr3t https://x.example"), "secret:", secret},
		{"curl -u, a word", textPayload("curl -u admin:password https://x.example"), "", ""},
		{"curl -u placeholder", textPayload("curl -u someone@example.com:[redacted learned 0a1b2c3d] https://x.example"), "", ""},
		{"curl -u variable", textPayload("curl -u $USER:$PASS https://x.example"), "", ""},
		{"curl -u without password", textPayload("curl -u someone https://x.example"), "", ""},
		{"docker --user", textPayload("docker run --user 1000:1000 img"), "", ""},
		{"--password", textPayload("psql --password=Tr0ub4dor&3 -h db"), "secret:password-argument", secret},
		{"--password apart", textPayload("vault login --password 'c0rrect horse'"), "secret:password-argument", secret},
		{"mysql -p", textPayload("mysql -u root -pS3cr3tPass shop"), "secret:password-argument", secret},
		{"docker login -p", textPayload("docker login -u bot -p gh0_token registry.example.com"), "secret:password-argument", secret},
		{"mysql -p prompts", textPayload("mysql -u root -p shop"), "", ""},
		{"mkdir -p", textPayload("mkdir -p /tmp/build && ssh -p 2222 host"), "", ""},
		{"authorization header", textPayload("curl -H 'Authorization: Basic dXNlcjpwYXNz' https://x.example"), "secret:authorization-header", secret},
		{"authorization header text", textPayload("Authorization: Bearer abc123\nAccept: */*"), "secret:authorization-header", secret},
		{"authorization in prose", textPayload("(Authorization: Bearer TOKEN, also quoted)"), "", ""},
		{"--password in prose", textPayload("passArgRe is --password and --pass with a value"), "", ""},
		{"authorization placeholder", textPayload("Authorization: Bearer [redacted learned 0a1b2c3d]"), "", ""},
		{"authorization variable", textPayload(`curl -H "Authorization: Bearer $TOKEN" x`), "", ""},
		{"authorization ellipsis", textPayload(`"Authorization": "Bearer ..."`), "", ""},
		{"authorization word", textPayload("the authorization flow, authorization_requested"), "", ""},
	})
}

func TestLeakCheckFindsIDsAndDatesByTheirContext(t *testing.T) {
	runLeakCases(t, []leakCase{
		{"ssn", textPayload("SSN: 123-45-6789"), "ssn", "US social security number"},
		{"social security", textPayload("her social security number is 078-05-1120."), "ssn", "US social security number"},
		{"ssn after a number", textPayload("SSN 12: 123-45-6789"), "", ""},
		{"ssn far", textPayload("SSN: see the file, it is somewhere, 123-45-6789"), "", ""},
		{"ssn fake", textPayload("SSN: 923-45-6789"), "", ""},
		{"ssn without context", textPayload("ticket 123-45-6789"), "", ""},
		{"date of birth", textPayload("DOB: 1987-03-04"), "date_of_birth", ""},
		{"born", textPayload("she was born on March 4th, 1987 in Oslo"), "date_of_birth", ""},
		{"date of birth, day first", textPayload("Date of birth 24/12/1990"), "date_of_birth", ""},
		{"born far from the date", textPayload("born in Oslo on 1987-03-04"), "", ""},
		{"no day of the calendar", textPayload("DOB: 1987-02-30"), "", ""},
		{"a date elsewhere", textPayload("deployed on 1987-03-04"), "", ""},
		{"passport", textPayload("passport number: 533401981"), "passport", ""},
		{"passport no.", textPayload("Passport No. X01B00T47"), "passport", ""},
		{"passport without number", textPayload("passport office opens at 9"), "", ""},
	})
}

func TestLeakCheckFindsLearnedValuesInEveryForm(t *testing.T) {
	c := newChecker(t, Config{Rules: juniorRules},
		Value{"person_name", "Nadia Noor"}, Value{"first_name", "Nadia"}, Value{"last_name", "Noor"})
	inner, _ := json.Marshal(map[string]string{"who": "NADIA NOOR"})
	for name, payload := range map[string]string{
		"plain":     textPayload("ask Nadia about it"),
		"entities":  textPayload("ask N&#97;dia N&#x6f;or"),
		"percent":   textPayload("https://x.example/?q=Nadia%20Noor"),
		"base64":    textPayload("blob " + base64.StdEncoding.EncodeToString([]byte("owner Nadia Noor"))),
		"in base64": textPayload(base64.URLEncoding.EncodeToString(inner)),
		"nested":    `{"m": ` + strings.TrimSpace(string(must(json.Marshal(string(inner))))) + `}`,
		"key":       `{"noor": 1}`,
	} {
		doc := leakDoc(payload)
		hits := c.Verify(doc, []byte(doc))
		if !slices.ContainsFunc(hits, func(h Hit) bool { return strings.HasSuffix(h.Kind, "name") }) {
			t.Errorf("%s: hits %+v; want the name", name, hits)
		}
		for _, h := range hits {
			if strings.Contains(strings.ToLower(h.Path), "noor") {
				t.Errorf("%s: a hit's path shows the value: %s", name, h.Path)
			}
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLeakCheckFindsABrokenNestedDocument(t *testing.T) {
	in := leakDoc(textPayload("a"), `{"message": "{\"a\": \"b\", \"c\": [1, 2]}"}`)
	out := strings.Replace(in, `\"c\": [1, 2]}`, `\"c\": [1, 2}`, 1)
	c := newChecker(t, Config{Rules: juniorRules})
	if hits := c.Verify(in, []byte(in)); len(hits) != 0 {
		t.Fatalf("hits in the input against itself: %+v", hits)
	}
	hits := c.Verify(in, []byte(out))
	if len(hits) != 1 || hits[0].Seq != 1 || !strings.Contains(hits[0].Kind, "no longer parses") {
		t.Fatalf("hits %+v; want row 1's document", hits)
	}
	if hits := c.Verify(in, []byte(in[:len(in)-1])); len(hits) != 1 || hits[0].Kind != "invalid JSON" {
		t.Fatalf("hits %+v; want invalid JSON", hits)
	}
}

// TestNestedSignatureReadsAsTheWalk holds the light reading of an input
// to what the walk of an output finds.
func TestNestedSignatureReadsAsTheWalk(t *testing.T) {
	deep, _ := json.Marshal(map[string]any{"a": `{"b": "[1, {\"c\": \"{}\"}]", "k": "x"}`, `{"key": "that looks like one"}`: "[not json"})
	for _, doc := range []string{
		leakDoc(textPayload("a")),
		leakDoc(`{"m": " {\"a\": 1} ", "n": "\t[1]", "o": "\u007b\"x\":2}", "p": "{x}", "q": ["{}", "[]", "{"], "r": "\\\"{}"}`),
		leakDoc(string(deep), `{"s": `+string(must(json.Marshal(string(deep))))+`}`),
		`{"events": [], "x": {"y": "[\"z\"]"}}`,
	} {
		var read nestedSignature
		read.read(doc, &nestedMemo{})
		w := &leakWalk{seq: -1}
		if !w.walkDoc(doc) {
			t.Fatalf("invalid: %s", doc)
		}
		if !read.same(&w.sig) {
			t.Errorf("read %+v, walk %+v: %s", read, w.sig, doc)
		}
		var again nestedSignature
		memo := &nestedMemo{}
		again.read(doc, memo)
		again = nestedSignature{}
		again.read(doc, memo) // from the memo
		if !again.same(&w.sig) {
			t.Errorf("read from the memo %+v, walk %+v: %s", again, w.sig, doc)
		}
	}
}

func TestLeakWalkValidatesAsEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`, ` [1, 2.5e-3, -0, "a\u00e9\ud83d\ude00", true, false, null] `, `{"a":{"b":[{}]}}`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a" 1}`, `{"a":1,}`, `[1 2]`,
		`{"a":1}x`, `"\ud800"`, `{"a":"\u12"}`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001), ``, ` `,
	} {
		w := &leakWalk{seq: -1}
		if got, want := w.walkDoc(doc), json.Valid([]byte(doc)); got != want {
			t.Errorf("walk of %.40q: valid %t, encoding/json says %t", doc, got, want)
		}
		if got, want := validJSON(doc), json.Valid([]byte(doc)); got != want {
			t.Errorf("validJSON(%.40q) = %t, encoding/json says %t", doc, got, want)
		}
	}
}

func FuzzLeakWalk(f *testing.F) {
	f.Add([]byte(`{"a":["b",{"c":"{\"d\":1}"}]}`))
	f.Add([]byte(leakDoc(textPayload("x"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc := string(data)
		valid := json.Valid(data)
		var strs []string
		w := &leakWalk{seq: -1, leaf: func(_ *leakWalk, text string, number, key bool) {
			if !number {
				strs = append(strs, text)
			}
		}}
		if w.walkDoc(doc) != valid || validJSON(doc) != valid {
			t.Fatalf("%q: walk and encoding/json disagree on validity (%t)", doc, valid)
		}
		if !valid {
			return
		}
		var read nestedSignature
		read.read(doc, &nestedMemo{})
		if !read.same(&w.sig) {
			t.Fatalf("%q: read %+v, walk %+v", doc, read, w.sig)
		}
		// Every string the walk decoded is one encoding/json decodes.
		var v any
		if err := decodeNumbers(data, &v); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		var collect func(v any)
		collect = func(v any) {
			switch v := v.(type) {
			case string:
				want[v] = true
				if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
					var inner any
					if decodeNumbers([]byte(t), &inner) == nil {
						collect(inner)
					}
				}
			case []any:
				for _, x := range v {
					collect(x)
				}
			case map[string]any:
				for k, x := range v {
					want[k] = true
					collect(x)
				}
			}
		}
		collect(v)
		for _, s := range strs {
			// encoding/json writes U+FFFD for each byte that is no
			// character; the walk keeps them.
			if !want[string([]rune(s))] {
				t.Fatalf("%q: the walk decoded %q, which encoding/json does not", doc, s)
			}
		}
	})
}

// contextKinds are what the rules that read context find.
var contextKinds = []string{"secret:aws-secret-access-key", "secret:curl-user-password", "secret:password-argument", "secret:authorization-header",
	"secret:gcp-service-account", "secret:aws-credentials-file", "ssn", "date_of_birth", "passport", "phone"}

// decodeNumbers decodes JSON with numbers of any size.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more after the value")
	}
	return nil
}

// TestLeakCheckFalsePositives measures the leak check's detectors, the
// name rule among them, on text without personal data: this project's
// manual (README.md and docs/, technical prose) and the recordings in git.
func TestLeakCheckFalsePositives(t *testing.T) {
	pages, _ := filepath.Glob("../../docs/*.md")
	var readme []byte
	for _, page := range append([]string{"../../README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(append(readme, b...), "\n\n"...)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md found")
	}
	d := must(newDetectors(juniorRules))
	var forms formReader
	found := 0
	for _, para := range strings.Split(string(readme), "\n\n") {
		for _, f := range forms.read(para) {
			for _, k := range d.textHits(f, nil) {
				// Only the rules that read context and names: the manual
				// is full of ids and addresses of examples. It names one
				// example person on purpose.
				if k == "name" && !strings.Contains(para, "José Núñez") || slices.Contains(contextKinds, k) {
					found++
					t.Logf("manual: %s in %.80q", k, para)
				}
			}
		}
	}
	if perKB := float64(found) / float64(len(readme)) * 1024; perKB > 0.1 {
		t.Errorf("%d findings in the manual (%d bytes): %.2f per KB, want at most 0.1", found, len(readme), perKB)
	}
	files, _ := filepath.Glob("../../recordings/samples/*.json")
	files = append(files, "../testdata/launch-planning.json")
	if len(files) < 2 {
		t.Fatal("no recordings found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found, err := Check(b, f, juniorRules)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range found {
			if fd.Path != "exporter.sanitizer" {
				t.Errorf("%s: %+v", f, fd)
			}
		}
	}
}

func TestCheckNamesWhereAFileStopsParsing(t *testing.T) {
	doc := leakDoc(textPayload("hello"))
	for _, tt := range []struct {
		name string
		doc  string
		want string
	}{
		{"truncated", doc[:40], "(byte 40): invalid recorded history: unexpected end of input: the document is truncated"},
		{"truncated after a backslash", `{"version": 1, "events": [{"text": "a\\`, "(byte 39): invalid recorded history: unexpected end of input: the document is truncated"},
		{"a stray byte", doc[:12] + "]" + doc[12:], "(byte 13): invalid recorded history: malformed JSON"},
	} {
		_, err := Check([]byte(tt.doc), "f.json", juniorRules)
		var fe *history.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "f.json") {
			t.Errorf("%s: %v; want a format error at %s", tt.name, err, tt.want)
		}
	}
}
