package keyref

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
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// defaultValues are DefaultValues as they were.
var defaultValues = []cassette.Value{
	{Name: "uuid", Re: regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`),
		Hint: func(s string) bool { return strings.Count(s, "-") >= 4 }},
	{Name: "time", Re: regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`),
		Hint: func(s string) bool { return strings.Contains(s, "T") && strings.Contains(s, ":") }},
	{Name: "epoch-ms", Re: regexp.MustCompile(`\b1[5-9]\d{11}\b`), Hint: hasDigitRun(13)},
}

func valueList(m *cassette.Matcher) []cassette.Value {
	if m.Values == nil {
		return defaultValues
	}
	return m.Values
}

// Parts are the canonical parts of r, as Matcher.Parts first gave them.
func Parts(m *cassette.Matcher, r *cassette.Request) []cassette.Part {
	in := &cassette.Interaction{Request: *r}
	in.Request.Headers = r.Headers.Clone()
	in.Request.Form = cloneValues(r.Form)
	redact(in)
	rr := in.Request
	parts := []cassette.Part{{Name: "method", Value: strings.ToUpper(rr.Method)}, {Name: "url", Value: values(m, canonicalURL(rr.URL))}}
	for _, h := range m.KeyHeaders {
		parts = append(parts, cassette.Part{Name: "header:" + strings.ToLower(h), Value: values(m, strings.Join(rr.Headers.Values(h), ","))})
	}
	return append(parts, bodyParts(m, rr.Body)...)
}

// Key is the key of r, as Matcher.Key first gave it.
func Key(m *cassette.Matcher, r *cassette.Request) (string, []cassette.Part) {
	parts := Parts(m, r)
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p.Name))
		h.Write([]byte{0})
		h.Write([]byte(p.Value))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), parts
}

func values(m *cassette.Matcher, s string) string {
	for _, v := range valueList(m) {
		if v.Hint == nil || v.Hint(s) {
			s = v.Re.ReplaceAllLiteralString(s, "<<"+v.Name+">>")
		}
	}
	return s
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

func bodyParts(m *cassette.Matcher, body string) []cassette.Part {
	t := strings.TrimSpace(body)
	if t == "" {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []cassette.Part{{Name: "body", Value: values(m, body)}}
	}
	switch doc := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(doc))
		for k := range doc {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]cassette.Part, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, cassette.Part{Name: "body." + k, Value: values(m, canonicalJSON(doc[k]))})
		}
		return parts
	case []any:
		parts := make([]cassette.Part, 0, len(doc))
		for i, item := range doc {
			parts = append(parts, cassette.Part{Name: "body[" + strconv.Itoa(i) + "]", Value: values(m, canonicalJSON(item))})
		}
		return parts
	}
	return []cassette.Part{{Name: "body", Value: values(m, canonicalJSON(v))}}
}

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

func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "cookie", "session", "password", "passwd", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func redact(in *cassette.Interaction) {
	redactHeaders(in.Request.Headers)
	redactHeaders(in.Response.Headers)
	in.Request.URL = redactURL(in.Request.URL)
	for name, vals := range in.Request.Form {
		for i := range vals {
			if sensitive(name) {
				vals[i] = cassette.Redacted
			} else {
				vals[i] = redactSecrets(vals[i])
			}
		}
	}
	in.Request.Body = redactBody(in.Request.Body, in.Request.Headers.Get("Content-Type"))
	in.Response.Body = redactSecrets(in.Response.Body)
	if len(in.Response.Body) != lastEnd(in.Chunks) {
		// The body changed length: the chunk boundaries no longer hold.
		in.Chunks = nil
	}
}

func redactHeaders(h http.Header) {
	for name, vals := range h {
		for i := range vals {
			if sensitive(name) || strings.EqualFold(name, "Set-Cookie") {
				vals[i] = cassette.Redacted
			} else {
				vals[i] = redactSecrets(vals[i])
			}
		}
	}
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactSecrets(raw)
	}
	if u.User != nil {
		u.User = url.User(cassette.Redacted)
	}
	// The path is scanned decoded: %78oxb- is xoxb-.
	if p := redactSecrets(u.Path); p != u.Path {
		u.Path, u.RawPath = p, ""
	}
	q := u.Query()
	changed := false
	for name, vals := range q {
		for i, v := range vals {
			nv := v
			if sensitive(name) {
				nv = cassette.Redacted
			} else {
				nv = redactSecrets(v)
			}
			if nv != v {
				vals[i], changed = nv, true
			}
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return redactSecrets(u.String())
}

func redactBody(body, contentType string) string {
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		if q, err := url.ParseQuery(body); err == nil {
			changed := false
			for name, vals := range q {
				for i := range vals {
					if sensitive(name) && vals[i] != cassette.Redacted {
						vals[i], changed = cassette.Redacted, true
					}
				}
			}
			if changed {
				body = q.Encode()
			}
		}
	}
	return redactSecrets(body)
}

func redactSecrets(s string) string {
	found := secrets.Find(s)
	if len(found) == 0 {
		return s
	}
	slices.SortFunc(found, func(a, b secrets.Match) int { return a.Start - b.Start })
	var b strings.Builder
	pos := 0
	for _, m := range found {
		if m.Start < pos {
			// Overlapping secrets are one span: none of either stays.
			pos = max(pos, m.End)
			continue
		}
		b.WriteString(s[pos:m.Start])
		b.WriteString(cassette.Redacted)
		pos = m.End
	}
	b.WriteString(s[pos:])
	return b.String()
}

func lastEnd(chunks []cassette.Chunk) int {
	if len(chunks) == 0 {
		return -1
	}
	return chunks[len(chunks)-1].End
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
