package bench

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

// The baseline of BenchmarkKey: the key as it was first computed, that
// code as it was (proxy/cassette's key.go and redact.go), renamed. The
// package's own tests keep the same reference, and check that Key equals
// it byte for byte.

// referenceDefaultValues are DefaultValues as they were.
var referenceDefaultValues = []cassette.Value{
	{Name: "uuid", Re: regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`),
		Hint: func(s string) bool { return strings.Count(s, "-") >= 4 }},
	{Name: "time", Re: regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`),
		Hint: func(s string) bool { return strings.Contains(s, "T") && strings.Contains(s, ":") }},
	{Name: "epoch-ms", Re: regexp.MustCompile(`\b1[5-9]\d{11}\b`), Hint: referenceHasDigitRun(13)},
}

func referenceValueList(m *cassette.Matcher) []cassette.Value {
	if m.Values == nil {
		return referenceDefaultValues
	}
	return m.Values
}

func referenceParts(m *cassette.Matcher, r *cassette.Request) []cassette.Part {
	in := &cassette.Interaction{Request: *r}
	in.Request.Headers = r.Headers.Clone()
	in.Request.Form = referenceCloneValues(r.Form)
	referenceRedact(in)
	rr := in.Request
	parts := []cassette.Part{{Name: "method", Value: strings.ToUpper(rr.Method)}, {Name: "url", Value: referenceValues(m, referenceCanonicalURL(rr.URL))}}
	for _, h := range m.KeyHeaders {
		parts = append(parts, cassette.Part{Name: "header:" + strings.ToLower(h), Value: referenceValues(m, strings.Join(rr.Headers.Values(h), ","))})
	}
	return append(parts, referenceBodyParts(m, rr.Body)...)
}

func referenceKey(m *cassette.Matcher, r *cassette.Request) (string, []cassette.Part) {
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

func referenceValues(m *cassette.Matcher, s string) string {
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

func referenceBodyParts(m *cassette.Matcher, body string) []cassette.Part {
	t := strings.TrimSpace(body)
	if t == "" {
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return []cassette.Part{{Name: "body", Value: referenceValues(m, body)}}
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
			parts = append(parts, cassette.Part{Name: "body." + k, Value: referenceValues(m, referenceCanonicalJSON(doc[k]))})
		}
		return parts
	case []any:
		parts := make([]cassette.Part, 0, len(doc))
		for i, item := range doc {
			parts = append(parts, cassette.Part{Name: "body[" + strconv.Itoa(i) + "]", Value: referenceValues(m, referenceCanonicalJSON(item))})
		}
		return parts
	}
	return []cassette.Part{{Name: "body", Value: referenceValues(m, referenceCanonicalJSON(v))}}
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

func referenceRedact(in *cassette.Interaction) {
	referenceRedactHeaders(in.Request.Headers)
	referenceRedactHeaders(in.Response.Headers)
	in.Request.URL = referenceRedactURL(in.Request.URL)
	for name, vals := range in.Request.Form {
		for i := range vals {
			if referenceSensitive(name) {
				vals[i] = cassette.Redacted
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
				vals[i] = cassette.Redacted
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
		u.User = url.User(cassette.Redacted)
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
				nv = cassette.Redacted
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
					if referenceSensitive(name) && vals[i] != cassette.Redacted {
						vals[i], changed = cassette.Redacted, true
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
		b.WriteString(cassette.Redacted)
		pos = m.End
	}
	b.WriteString(s[pos:])
	return b.String()
}

func referenceLastEnd(chunks []cassette.Chunk) int {
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
