package cassette

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Value names a changing value in requests, such as a UUID or a time: in
// a key it stands as <<name>>, so two requests that differ only there
// match; in a recorded response, a value the request sent stands as
// <<name:n>> (the request's n-th value of that name, from 1) and is given
// this run's value on replay.
type Value struct {
	Name string
	Re   *regexp.Regexp
	// Hint, if set, says cheaply whether a text may hold the value, so
	// that the expression runs only where it can match.
	Hint func(string) bool
}

func (v *Value) mayMatch(s string) bool { return v.Hint == nil || v.Hint(s) }

// DefaultValues are the changing values every rule knows: UUIDs, ISO 8601
// times and Unix times in milliseconds.
func DefaultValues() []Value {
	return []Value{
		{"uuid", regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`),
			func(s string) bool { return strings.Count(s, "-") >= 4 }},
		{"time", regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`),
			func(s string) bool { return strings.Contains(s, "T") && strings.Contains(s, ":") }},
		{"epoch-ms", regexp.MustCompile(`\b1[5-9]\d{11}\b`), hasDigitRun(13)},
	}
}

// Matcher turns requests into canonical keys for one rule.
type Matcher struct {
	// KeyHeaders are the request headers (lower case) that are part of
	// the key, such as ai-language-model-id.
	KeyHeaders []string
	// Values are the changing values to stand in for; nil means
	// DefaultValues.
	Values []Value
}

// Part is one named part of a canonical request: "method", "url",
// "header:<name>", "body", "body.<field>" or "body[<i>]".
type Part struct {
	Name  string
	Value string
}

// Parts returns the canonical parts of a request, redacted as a cassette
// is: method; URL with scheme, host, path and sorted query; each key
// header; and the body. A JSON object body gives a part per top-level
// field and a JSON array body one per item, each with keys sorted; other
// bodies are one part. Changing values stand as <<name>>.
func (m *Matcher) Parts(r *Request) []Part {
	in := &Interaction{Request: *r}
	in.Request.Headers = r.Headers.Clone()
	in.Request.Form = cloneValues(r.Form)
	Redact(in)
	rr := in.Request
	parts := []Part{{"method", strings.ToUpper(rr.Method)}, {"url", m.values(canonicalURL(rr.URL))}}
	for _, h := range m.KeyHeaders {
		parts = append(parts, Part{"header:" + strings.ToLower(h), m.values(strings.Join(rr.Headers.Values(h), ","))})
	}
	return append(parts, m.bodyParts(rr.Body)...)
}

// Key returns the canonical key of a request: a hash of its parts.
func (m *Matcher) Key(r *Request) (string, []Part) {
	parts := m.Parts(r)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p.Name))
		h.Write([]byte{0})
		h.Write([]byte(p.Value))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), parts
}

// defaultValues are compiled once; they are never changed.
var defaultValues = DefaultValues()

func (m *Matcher) valueList() []Value {
	if m.Values == nil {
		return defaultValues
	}
	return m.Values
}

// values replaces the changing values of s by <<name>>; at one place the
// first value that matches wins.
func (m *Matcher) values(s string) string {
	for _, v := range m.valueList() {
		if v.mayMatch(s) {
			s = v.Re.ReplaceAllLiteralString(s, "<<"+v.Name+">>")
		}
	}
	return s
}

// hasDigitRun returns a hint for values of n digits in a row.
func hasDigitRun(n int) func(string) bool {
	return func(s string) bool {
		run := 0
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' {
				if run++; run >= n {
					return true
				}
			} else {
				run = 0
			}
		}
		return false
	}
}

// RequestValues returns the changing values a request holds, by name, in
// the order of its canonical parts.
func (m *Matcher) RequestValues(r *Request) map[string][]string {
	found := map[string][]string{}
	for _, p := range m.rawParts(r) {
		for _, v := range m.valueList() {
			if v.mayMatch(p) {
				found[v.Name] = append(found[v.Name], v.Re.FindAllString(p, -1)...)
			}
		}
	}
	return found
}

func (m *Matcher) rawParts(r *Request) []string {
	parts := []string{canonicalURL(r.URL)}
	for _, h := range m.KeyHeaders {
		parts = append(parts, strings.Join(r.Headers.Values(h), ","))
	}
	return append(parts, r.Body)
}

// Template replaces, in a response body, each value the request sent with
// <<name:n>>, for Fill to give it this run's value on replay.
func (m *Matcher) Template(body string, reqValues map[string][]string) string {
	for _, v := range m.valueList() {
		for i, val := range reqValues[v.Name] {
			if val != "" {
				body = strings.ReplaceAll(body, val, "<<"+v.Name+":"+strconv.Itoa(i+1)+">>")
			}
		}
	}
	return body
}

var slot = regexp.MustCompile(`<<([a-z0-9-]+):(\d+)>>`)

// Fill gives the <<name:n>> of a recorded response body the values of this
// run's request.
func Fill(body string, reqValues map[string][]string) string {
	if !strings.Contains(body, "<<") {
		return body
	}
	return slot.ReplaceAllStringFunc(body, func(s string) string {
		m := slot.FindStringSubmatch(s)
		n, _ := strconv.Atoi(m[2])
		if vals := reqValues[m[1]]; n >= 1 && n <= len(vals) {
			return vals[n-1]
		}
		return s
	})
}

func canonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = strings.ToLower(u.Host)
	u.Scheme = strings.ToLower(u.Scheme)
	u.RawQuery = sortedQuery(u.Query())
	u.Fragment = ""
	return u.String()
}

func sortedQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vals := append([]string(nil), q[k]...)
		sort.Strings(vals)
		for _, v := range vals {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(v))
		}
	}
	return b.String()
}

func (m *Matcher) bodyParts(body string) []Part {
	t := strings.TrimSpace(body)
	if t == "" {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []Part{{"body", m.values(body)}}
	}
	switch doc := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(doc))
		for k := range doc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]Part, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, Part{"body." + k, m.values(canonicalJSON(doc[k]))})
		}
		return parts
	case []any:
		parts := make([]Part, 0, len(doc))
		for i, item := range doc {
			parts = append(parts, Part{"body[" + strconv.Itoa(i) + "]", m.values(canonicalJSON(item))})
		}
		return parts
	}
	return []Part{{"body", m.values(canonicalJSON(v))}}
}

// canonicalJSON writes v with object keys sorted and no HTML escaping.
func canonicalJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	c := make(url.Values, len(v))
	for k, vals := range v {
		c[k] = append([]string(nil), vals...)
	}
	return c
}
