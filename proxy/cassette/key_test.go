package cassette_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/internal/keyref"
	"github.com/agentvcr/agentvcr/internal/secrets"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// oracleMatchers are the matchers whose keys are compared with the
// reference: the zero cassette.Matcher, one as the proxy builds it for a rule (key
// headers, a value of its own, then cassette.DefaultValues), and one whose key
// header is a credential, and so redacted, with a value that has a hint
// and one of cassette.DefaultValues' expressions under another name.
var oracleMatchers = []*cassette.Matcher{
	{},
	recordedMatcher(),
	{KeyHeaders: []string{"X-API-KEY", "ai-language-model-id"}, Values: []cassette.Value{
		{Name: "ticket", Re: regexp.MustCompile(`[A-Z]+-\d+`), Hint: func(s string) bool { return strings.Contains(s, "-") }},
		{Name: "plain-uuid", Re: regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)},
	}},
}

// oracleRequest makes the request the oracle tests key: header goes in
// ai-language-model-id and in x-api-key, beside a second value.
func oracleRequest(contentType, header, url, body string) *cassette.Request {
	return &cassette.Request{Method: "post", URL: url, Body: body, Headers: http.Header{
		"Content-Type":         {contentType},
		"Ai-Language-Model-Id": {header},
		"X-Api-Key":            {header, "second"},
	}}
}

// checkKey fails t unless every oracle matcher gives r the parts and key
// of the reference.
func checkKey(t *testing.T, r *cassette.Request) {
	t.Helper()
	for i, m := range oracleMatchers {
		wantKey, wantParts := keyref.Key(m, r)
		key, parts := m.Key(r), m.Parts(r)
		if !slices.Equal(parts, wantParts) {
			for k := range max(len(parts), len(wantParts)) {
				var got, want cassette.Part
				if k < len(parts) {
					got = parts[k]
				}
				if k < len(wantParts) {
					want = wantParts[k]
				}
				if got != want {
					t.Fatalf("matcher %d, body %q: part %d is %q = %q; the reference has %q = %q", i, r.Body, k, got.Name, got.Value, want.Name, want.Value)
				}
			}
		}
		if key != wantKey {
			t.Fatalf("matcher %d, body %q: key %s; the reference has %s", i, r.Body, key, wantKey)
		}
		if !slices.Equal(m.Parts(r), parts) {
			t.Fatalf("matcher %d, body %q: Parts differs from Key's parts", i, r.Body)
		}
	}
}

// keySeeds are bodies where a canonical form is easy to get wrong.
func keySeeds() []string {
	r := strings.Repeat
	// Built here so that no token shape is in git.
	anthropic := "sk-" + "ant-api03-" + r("Zq7_", 10)
	jwt := "eyJ" + r("hbGci", 3) + ".eyJ" + r("zdWIi", 3) + "." + r("sig", 4)
	aws := "AK" + "IA" + r("ABCD", 4)
	telegram := "123456789:" + "AA" + r("H7k", 11)
	return []string{
		// White space, and what is not JSON.
		"", " ", "\n\t\r ", "\u00a0{}\u0085", " {\"a\" : 1 ,\n\t\"b\" : [ 1 , 2 ] }\r\n",
		"plain text", "{", "}", "[", "]", ",", `{"a":1,}`, `{"a"}`, `{"a":}`, `{,}`, `{"a":1 "b":2}`, `{1:2}`, `[1,]`, `[,1]`, `{"a":1}}`,
		// Scalars.
		"null", "true", "false", "tru", "nul", "nulls", "0", "-0", "1.0", "1e10", "1E+10", "-1.5e-3", "12345678901234567890123",
		"01", "1.", "-", ".5", "1e", "1e+", "+1", "0x10", "-01", "[1.e5]",
		// Strings.
		`"abc"`, `""`, `"\u00e9"`, `"\/"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800"`, `"\ud800\u0041"`, `"\ud800\ud800\udc00"`,
		`"\ud800\n"`, `"\uDBFF\uDFFF"`, `"\u2028\u2029"`, "\"\u2028\u2029\"", `"\u0000\u001f\u001F\u007f\u0008\u000c\u000A"`,
		`"\b\f\n\r\t\"\\"`, `"<>&\u003c"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"a\xc3\"", "\"\xc3\xa9\xe2\x82\"", "\"abc", "\"\x01\"",
		`"\x"`, `"\u12"`, `"\u12G4"`, "\"\x7f\"", `"a\`, "\"" + r("long plain text, ", 20) + "\"", "\"" + r("é", 9) + "\\n\"",
		// Objects.
		`{}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a":{"c":1,"b":2},"a":[3]}`, `{"\u0061":1,"a":2}`, `{"a":2,"\u0061":1}`,
		`{"é":1,"e":2,"\u00e9":3,"E":4}`, `{"\n":1," ":2,"":3}`, `{"a\"b":1,"a":2}`, "{\"\xff\":1,\"\xfe\":2}", `{"\ud800":1,"\udbff":2}`,
		`{"x":{"b":{"d":1,"c":2},"a":{"b":1,"a":2,"b":3}}}`, `{"k":{"z":1,"y":2,"z":3,"y":4,"x":5}}`, `{"b":[],"a":{}}`,
		// Arrays.
		`[]`, `[[[]]]`, `[{"b":[{"d":1,"c":2}],"a":0},"x",3.50,null]`, `[1,1,1]`,
		r("[", 50) + r("]", 50), r(`{"b":{"a":`, 25) + "1" + r("}", 50),
		// Trailing data.
		`{} {}`, `{}]`, `{}}`, `[]x`, `1 2`, `1]`, `"a"}`, `true false`, `{"a":1}` + "\n", `{}]]]garbage`, `123abc`, "{}\x00", `[] ]`, `1}x`,
		// Credentials, which redaction takes out before the key.
		`{"key":"` + anthropic + `"}`, `{"` + anthropic + `":1}`, `{"a":"` + jwt + `","b":"` + aws + `","c":"` + telegram + `"}`,
		`{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIE"}`, `{"k":"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"}`,
		`{"t":"sk-` + "\\u0061nt-" + r("x", 30) + `"}`, `{"t":"\nAKIA` + r("Q", 16) + `"}`,
		// Changing values, in values, keys and numbers.
		`{"id":"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b"}`, `{"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b":1}`, `{"x":{"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b":1}}`,
		`"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b"`, `"3F1C9A0B-2D3E-4F50-8A6B-7C8D9E0F1A2Bx"`, `"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2"`,
		`"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b1790000000123"`, `"x3f1c9a0b--2d3e-4f50-8a6b-7c8d9e0f1a2b"`,
		`{"at":"2026-11-29T12:00:00Z"}`, `"2026-11-29T12:00:00.123456Z"`, `"2026-11-29T12:00:00+01:30"`, `"2026-11-29T12:00:00+0130"`,
		`"2026-11-29T12:00:00+01:3"`, `"2026-11-29T12:00:00+013"`, `"2026-11-29T12:00:00."`, `"2026-11-29T12:00:00.Z"`, `"2026-11-29T12:00:00-01"`,
		`"12026-11-29T12:00:00Z2026-11-29T12:00:00Z"`, `"2026-11-29T12:00:0"`, `"2026-11-29 12:00:00Z"`, `{"2026-11-29T12:00:00Z":"x"}`,
		`{"ts":1790000000123}`, `[1790000000123.5,-1790000000123,1.1790000000123,1e1790000000123]`, `"x1790000000123"`, `"17900000001234"`,
		`"\n1790000000123"`, `"_1790000000123 1790000000123_ é1790000000123é"`, `"1490000000123 1590000000123"`, `[17900000001231790000000123]`,
		`{"id":"req_abc123","u":"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b"}`, `{"t":"see ABC-123 and 3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b"}`,
		// Forms, and form bodies that are not forms.
		"token=abc&channel=C1&text=hi+there", "a=1&b=%zz", `{"a":1}`,
	}
}

func FuzzKeyMatchesReference(f *testing.F) {
	const form = "application/x-www-form-urlencoded"
	for _, body := range keySeeds() {
		f.Add("application/json", "openai/gpt-5", "https://api.example.com/v1/x", body)
	}
	for _, body := range []string{"token=abc&channel=C1", "password=p&x=" + "sk-" + "proj-" + strings.Repeat("Ab3", 14), `{"key":1}`, "a=%zz", ""} {
		f.Add(form, "", "https://slack.com/api/chat.postMessage", body)
		f.Add(form+"; charset=utf-8", "", "https://slack.com/api/chat.postMessage", body)
	}
	for _, url := range []string{
		"https://api.example.com/v1?b=2&a=1&b=1", "https://user:pw@EXAMPLE.com/x/3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b?t=1790000000123#f",
		"HTTPS://Api.Example.com:443/a%2Fb?q=2026-11-29T12:00:00Z&api_key=secret", "::bad", "/relative?q=%zz", "",
	} {
		f.Add("application/json", "3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b", url, `{"a":1}`)
	}
	for _, r := range recordedRequests() {
		if len(r.Body) < 2<<10 {
			f.Add(r.Headers.Get("Content-Type"), r.Headers.Get("ai-language-model-id"), r.URL, r.Body)
		}
	}
	f.Fuzz(func(t *testing.T, contentType, header, url, body string) {
		checkKey(t, oracleRequest(contentType, header, url, body))
	})
}

// TestLongBodiesMatchReference checks bodies too long to be fuzzing
// seeds (the fuzzer spends its time shortening them): a 50 KB model
// request, the recorded requests, and nesting as deep as encoding/json
// accepts, and one deeper.
func TestLongBodiesMatchReference(t *testing.T) {
	r := strings.Repeat
	var b strings.Builder
	b.WriteString(`{"model":"claude","messages":[`)
	for b.Len() < 50<<10 {
		b.WriteString(`{"role":"user","content":"run 3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b failed at 2026-11-29T12:00:00Z (1790000000123) \u2014 caf\u00e9 \"quoted\"\n"},`)
	}
	b.WriteString(`{"role":"user","content":"last"}],"stream":true}`)
	bodies := []string{b.String(),
		r("[", 10000) + r("]", 10000), r("[", 10001) + r("]", 10001),
		r(`{"a":`, 10000) + "1" + r("}", 10000), r(`{"a":`, 10001) + "1" + r("}", 10001),
		r(`{"b":[`, 5000) + "1" + r("]}", 5000), "[" + r(`{"b":[`, 5000) + "1" + r("]}", 5000) + "]",
	}
	for _, body := range bodies {
		checkKey(t, oracleRequest("application/json", "m", "https://api.anthropic.com/v1/messages", body))
	}
	for _, req := range recordedRequests() {
		checkKey(t, &req)
	}
}

func FuzzMayHoldSecret(f *testing.F) {
	for _, s := range keySeeds() {
		f.Add(s)
	}
	for _, r := range secrets.Rules() {
		for _, w := range r.Keywords {
			f.Add("x" + w + "y")
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if found := secrets.Find(s); len(found) > 0 && !cassette.MayHoldSecret(s) {
			t.Fatalf("cassette.MayHoldSecret(%q) = false; secrets.Find finds %v", s, found)
		}
	})
}

func TestMayHoldSecretFindsEveryKeyword(t *testing.T) {
	for _, r := range secrets.Rules() {
		for _, w := range r.Keywords {
			for _, s := range []string{w, "a " + w, w + " b", strings.Repeat("_-xkA/", 50) + w} {
				if !cassette.MayHoldSecret(s) {
					t.Errorf("cassette.MayHoldSecret(%q) = false; it holds %s's keyword %q", s, r.Name, w)
				}
			}
		}
	}
	if cassette.MayHoldSecret("an ordinary sentence, with no keyword") {
		t.Error("a text without a keyword may hold a secret")
	}
}

func TestKeyConcurrently(t *testing.T) {
	reqs := recordedRequests()
	want := make([]string, len(reqs))
	m := recordedMatcher()
	for i := range reqs {
		want[i], _ = keyref.Key(m, &reqs[i])
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 50 {
				i := (g + n) % len(reqs)
				if key := m.Key(&reqs[i]); key != want[i] {
					t.Errorf("request %d: key %s; want %s", i, key, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
