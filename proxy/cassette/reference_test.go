package cassette

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// This file is the key as it was first computed, kept as the reference
// that Matcher.Key must equal byte for byte: cassettes store keys. It is
// that code as it was, renamed: Parts, Key and their helpers from key.go
// and Redact and its helpers from redact.go. Change nothing here but to
// follow a rename.

// referenceDefaultValues are DefaultValues as they were.
var referenceDefaultValues = []Value{
	{"uuid", regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`),
		func(s string) bool { return strings.Count(s, "-") >= 4 }},
	{"time", regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`),
		func(s string) bool { return strings.Contains(s, "T") && strings.Contains(s, ":") }},
	{"epoch-ms", regexp.MustCompile(`\b1[5-9]\d{11}\b`), referenceHasDigitRun(13)},
}

func referenceValueList(m *Matcher) []Value {
	if m.Values == nil {
		return referenceDefaultValues
	}
	return m.Values
}

func referenceParts(m *Matcher, r *Request) []Part {
	in := &Interaction{Request: *r}
	in.Request.Headers = r.Headers.Clone()
	in.Request.Form = referenceCloneValues(r.Form)
	referenceRedact(in)
	rr := in.Request
	parts := []Part{{"method", strings.ToUpper(rr.Method)}, {"url", referenceValues(m, referenceCanonicalURL(rr.URL))}}
	for _, h := range m.KeyHeaders {
		parts = append(parts, Part{"header:" + strings.ToLower(h), referenceValues(m, strings.Join(rr.Headers.Values(h), ","))})
	}
	return append(parts, referenceBodyParts(m, rr.Body)...)
}

func referenceKey(m *Matcher, r *Request) (string, []Part) {
	parts := referenceParts(m, r)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p.Name))
		h.Write([]byte{0})
		h.Write([]byte(p.Value))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), parts
}

func referenceValues(m *Matcher, s string) string {
	for _, v := range referenceValueList(m) {
		if v.Hint == nil || v.Hint(s) {
			s = v.Re.ReplaceAllLiteralString(s, "<<"+v.Name+">>")
		}
	}
	return s
}

func referenceCanonicalURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Host = strings.ToLower(u.Host)
	u.Scheme = strings.ToLower(u.Scheme)
	u.RawQuery = referenceSortedQuery(u.Query())
	u.Fragment = ""
	return u.String()
}

func referenceSortedQuery(q url.Values) string {
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

func referenceBodyParts(m *Matcher, body string) []Part {
	t := strings.TrimSpace(body)
	if t == "" {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []Part{{"body", referenceValues(m, body)}}
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
			parts = append(parts, Part{"body." + k, referenceValues(m, referenceCanonicalJSON(doc[k]))})
		}
		return parts
	case []any:
		parts := make([]Part, 0, len(doc))
		for i, item := range doc {
			parts = append(parts, Part{"body[" + strconv.Itoa(i) + "]", referenceValues(m, referenceCanonicalJSON(item))})
		}
		return parts
	}
	return []Part{{"body", referenceValues(m, referenceCanonicalJSON(v))}}
}

func referenceCanonicalJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func referenceCloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	c := make(url.Values, len(v))
	for k, vals := range v {
		c[k] = append([]string(nil), vals...)
	}
	return c
}

func referenceSensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "cookie", "session", "password", "passwd", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func referenceRedact(in *Interaction) {
	referenceRedactHeaders(in.Request.Headers)
	referenceRedactHeaders(in.Response.Headers)
	in.Request.URL = referenceRedactURL(in.Request.URL)
	for name, vals := range in.Request.Form {
		for i := range vals {
			if referenceSensitive(name) {
				vals[i] = Redacted
			} else {
				vals[i] = referenceRedactSecrets(vals[i])
			}
		}
	}
	in.Request.Body = referenceRedactBody(in.Request.Body, in.Request.Headers.Get("Content-Type"))
	in.Response.Body = referenceRedactSecrets(in.Response.Body)
	if len(in.Response.Body) != referenceLastEnd(in.Chunks) {
		// The body changed length: the chunk boundaries no longer hold.
		in.Chunks = nil
	}
}

func referenceRedactHeaders(h http.Header) {
	for name, vals := range h {
		for i := range vals {
			if referenceSensitive(name) || strings.EqualFold(name, "Set-Cookie") {
				vals[i] = Redacted
			} else {
				vals[i] = referenceRedactSecrets(vals[i])
			}
		}
	}
}

func referenceRedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return referenceRedactSecrets(raw)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	// The path is scanned decoded: %78oxb- is xoxb-.
	if p := referenceRedactSecrets(u.Path); p != u.Path {
		u.Path, u.RawPath = p, ""
	}
	q := u.Query()
	changed := false
	for name, vals := range q {
		for i, v := range vals {
			nv := v
			if referenceSensitive(name) {
				nv = Redacted
			} else {
				nv = referenceRedactSecrets(v)
			}
			if nv != v {
				vals[i], changed = nv, true
			}
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return referenceRedactSecrets(u.String())
}

func referenceRedactBody(body, contentType string) string {
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		if q, err := url.ParseQuery(body); err == nil {
			changed := false
			for name, vals := range q {
				for i := range vals {
					if referenceSensitive(name) && vals[i] != Redacted {
						vals[i], changed = Redacted, true
					}
				}
			}
			if changed {
				body = q.Encode()
			}
		}
	}
	return referenceRedactSecrets(body)
}

func referenceRedactSecrets(s string) string {
	found := secrets.Find(s)
	if len(found) == 0 {
		return s
	}
	slices.SortFunc(found, func(a, b secrets.Match) int { return a.Start - b.Start })
	var b strings.Builder
	pos := 0
	for _, m := range found {
		if m.Start < pos {
			continue
		}
		b.WriteString(s[pos:m.Start])
		b.WriteString(Redacted)
		pos = m.End
	}
	b.WriteString(s[pos:])
	return b.String()
}

func referenceLastEnd(chunks []Chunk) int {
	if len(chunks) == 0 {
		return -1
	}
	return chunks[len(chunks)-1].End
}

// referenceHasDigitRun returns a hint for values of n digits in a row.
func referenceHasDigitRun(n int) func(string) bool {
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
