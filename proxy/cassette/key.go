package cassette

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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
		{"uuid", regexp.MustCompile(uuidExpr), func(s string) bool { return strings.Count(s, "-") >= 4 }},
		{"time", regexp.MustCompile(timeExpr), func(s string) bool { return strings.Contains(s, "T") && strings.Contains(s, ":") }},
		{"epoch-ms", regexp.MustCompile(epochMsExpr), hasDigitRun(13)},
	}
}

// The expressions of DefaultValues. A Matcher finds them without running
// them, in whatever Value they stand (see finder).
const (
	uuidExpr    = `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
	timeExpr    = `\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`
	epochMsExpr = `\b1[5-9]\d{11}\b`
)

// Matcher turns requests into canonical keys for one rule. It is safe for
// concurrent use; its fields must not change once it is used.
type Matcher struct {
	// KeyHeaders are the request headers (lower case) that are part of
	// the key, such as ai-language-model-id.
	KeyHeaders []string
	// Values are the changing values to stand in for; nil means
	// DefaultValues.
	Values []Value

	// urls remembers the canonical part of the first URLs it sees (see
	// maxURLs): an agent calls a few endpoints again and again, and
	// parsing one twice (to redact it, then to sort its query) is a third
	// of a small request's key.
	urlsMu sync.Mutex
	urls   map[string]string
}

// maxURLs and maxURLLen bound what a Matcher remembers of URLs: no more
// than 256, of up to 2 KB each.
const (
	maxURLs   = 256
	maxURLLen = 2 << 10
)

// urlPart returns the canonical, redacted URL part of raw.
func (m *Matcher) urlPart(c *canon, vs []Value, raw string) string {
	m.urlsMu.Lock()
	part, ok := m.urls[raw]
	m.urlsMu.Unlock()
	if ok {
		return part
	}
	part = c.values(vs, canonicalURL(RedactURL(raw)))
	m.urlsMu.Lock()
	if len(m.urls) < maxURLs && len(raw) <= maxURLLen {
		if m.urls == nil {
			m.urls = map[string]string{}
		}
		m.urls[raw] = part
	}
	m.urlsMu.Unlock()
	return part
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
func (m *Matcher) Parts(r *Request) []Part { return m.parts(r, nil, true) }

// Key returns the canonical key of a request: a hash of its parts. It
// keeps none of them: a lookup that finds its recording needs no more.
func (m *Matcher) Key(r *Request) string {
	key, _ := m.key(r, false)
	return key
}

// key returns the key of r and, with keep, its parts.
func (m *Matcher) key(r *Request, keep bool) (string, []Part) {
	h := hashPool.Get().(*partHash)
	defer hashPool.Put(h)
	h.Reset()
	parts := m.parts(r, h, keep)
	return hex.EncodeToString(h.Sum(h.buf[:0])[:16]), parts
}

// parts returns the parts of r, if keep, and, if h is not nil, writes them
// to h as Key hashes them: each name and value, then a zero byte.
func (m *Matcher) parts(r *Request, h *partHash, keep bool) []Part {
	c := canonPool.Get().(*canon)
	defer c.release()
	vs := m.valueList()
	// Of what Redact does to a request, this is what the parts read: the
	// URL, the key headers, and the body, redacted by its Content-Type
	// header as redacted.
	body := redactBody(r.Body, redactSecrets(r.Headers.Get("Content-Type")))
	t := strings.TrimSpace(body)
	json := t != "" && c.parse(t)
	n := 2 + len(m.KeyHeaders)
	switch {
	case json:
		n += len(c.parts)
	case t != "":
		n++
	}
	b := partsBuilder{h: h, keep: keep}
	if keep {
		b.parts = make([]Part, 0, n)
	}
	b.add("method", strings.ToUpper(r.Method))
	b.add("url", m.urlPart(c, vs, r.URL))
	for _, name := range m.KeyHeaders {
		b.add("header:"+strings.ToLower(name), c.values(vs, keyHeader(r.Headers, name)))
	}
	switch {
	case t == "":
	case !json:
		b.add("body", c.values(vs, body))
	default:
		// The names share one string; each value is its own, as a part
		// outlives the request in an Index.
		var names string
		var first int
		if len(c.parts) > 0 && c.parts[0].nameEnd > 0 {
			first = c.parts[0].nameStart
			names = string(c.out[first:c.parts[len(c.parts)-1].nameEnd])
		}
		for _, p := range c.parts {
			name := "body"
			if p.nameEnd > 0 {
				name = names[p.nameStart-first : p.nameEnd-first]
			}
			value, _ := c.replace(vs, c.out[p.start:p.end], -1)
			b.addBytes(name, value)
		}
	}
	return b.parts
}

// partsBuilder collects parts when keep is set, and writes each to h when
// h is set.
type partsBuilder struct {
	parts []Part
	h     *partHash
	keep  bool
}

func (b *partsBuilder) add(name, value string) {
	if b.keep {
		b.parts = append(b.parts, Part{name, value})
	}
	if b.h != nil {
		b.h.writeString(name)
		b.h.writeString(value)
	}
}

func (b *partsBuilder) addBytes(name string, value []byte) {
	if b.keep {
		b.parts = append(b.parts, Part{name, string(value)})
	}
	if b.h != nil {
		b.h.writeString(name)
		b.h.Write(value)
		b.h.Write(zero)
	}
}

// keyHeader returns the values of a key header as redaction leaves them,
// joined.
func keyHeader(h http.Header, name string) string {
	vals := h.Values(name)
	if len(vals) == 1 && !sensitive(name) {
		return redactSecrets(vals[0])
	}
	redacted := make([]string, len(vals))
	for i, v := range vals {
		if sensitive(name) {
			redacted[i] = Redacted
		} else {
			redacted[i] = redactSecrets(v)
		}
	}
	return strings.Join(redacted, ",")
}

// partHash is the hash of a key.
type partHash struct {
	hash.Hash
	buf []byte
}

var hashPool = sync.Pool{New: func() any { return &partHash{Hash: sha256.New(), buf: make([]byte, 0, 512)} }}

// writeString writes s and a zero byte, through h.buf: converting s to
// bytes to write it would copy it to a new slice.
func (h *partHash) writeString(s string) {
	for len(s) > 0 {
		n := copy(h.buf[:cap(h.buf)], s)
		h.Write(h.buf[:n])
		s = s[n:]
	}
	h.Write(zero)
}

var zero = []byte{0}

var canonPool = sync.Pool{New: func() any { return new(canon) }}

// release returns c to canonPool, unless a body made it large.
func (c *canon) release() {
	if cap(c.out) > 1<<20 || cap(c.tmp) > 1<<20 || cap(c.vals[0]) > 1<<20 || cap(c.vals[1]) > 1<<20 {
		return
	}
	canonPool.Put(c)
}

// defaultValues are compiled once; they are never changed.
var defaultValues = DefaultValues()

func (m *Matcher) valueList() []Value {
	if m.Values == nil {
		return defaultValues
	}
	return m.Values
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
