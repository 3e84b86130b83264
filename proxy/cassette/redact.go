package cassette

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// Redacted stands in the place of a credential in a cassette. Requests are
// redacted the same way before their key is taken, so a redacted
// recording still matches.
const Redacted = "<<redacted>>"

// sensitive reports whether a header, query parameter or form field name
// says it holds a credential.
func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "cookie", "session", "password", "passwd", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redact replaces, in place, every credential of an interaction:
// credential-like headers (and Set-Cookie), query parameters and form
// fields by name, and every secret shape anywhere.
func Redact(in *Interaction) {
	redactHeaders(in.Request.Headers)
	redactHeaders(in.Response.Headers)
	in.Request.URL = RedactURL(in.Request.URL)
	for name, vals := range in.Request.Form {
		for i := range vals {
			if sensitive(name) {
				vals[i] = Redacted
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

func lastEnd(chunks []Chunk) int {
	if len(chunks) == 0 {
		return -1
	}
	return chunks[len(chunks)-1].End
}

func redactHeaders(h http.Header) {
	for name, vals := range h {
		for i := range vals {
			if sensitive(name) || strings.EqualFold(name, "Set-Cookie") {
				vals[i] = Redacted
			} else {
				vals[i] = redactSecrets(vals[i])
			}
		}
	}
}

// RedactURL returns raw as a cassette stores it: user info, credential-like
// query parameters and secret shapes replaced by Redacted.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactSecrets(raw)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
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
				nv = Redacted
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

// redactBody redacts a request body: form fields by name when it is a
// form, and secret shapes whatever it is.
func redactBody(body, contentType string) string {
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		if q, err := url.ParseQuery(body); err == nil {
			changed := false
			for name, vals := range q {
				for i := range vals {
					if sensitive(name) && vals[i] != Redacted {
						vals[i], changed = Redacted, true
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
	if !mayHoldSecret(s) {
		return s
	}
	return secrets.Redact(s, secrets.Find(s), func(secrets.Match) string { return Redacted })
}

// mayHoldSecret reports whether s holds a keyword of a secret shape: if
// not, secrets.Find finds nothing in it. secrets.Find looks for each of
// its 25 keywords with strings.Contains, which takes 250 µs over a model
// request of 50 KB; mayHoldSecret looks for them all in a pass of
// strings.IndexByte for each byte in anchors, a tenth of that.
func mayHoldSecret(s string) bool {
	for a := range anchors {
		a := &anchors[a]
		for i := 0; i < len(s); {
			j := strings.IndexByte(s[i:], a.b)
			if j < 0 {
				break
			}
			j += i
			// Most bytes found stand in no keyword: the bytes before and
			// after them say so.
			if (j == 0 || a.prev.has(s[j-1])) && (j+1 == len(s) || a.next.has(s[j+1])) {
				for _, w := range a.words {
					if start := j - w.at; start >= 0 && s[start] == w.word[0] && strings.HasPrefix(s[start:], w.word) {
						return true
					}
				}
			}
			i = j + 1
		}
	}
	return false
}

// An anchor is a byte, and the keywords a search for it finds, each with
// where the byte stands in it; prev and next hold the bytes before and
// after it in them (all bytes, where one starts or ends with it).
type anchor struct {
	b          byte
	words      []anchored
	prev, next byteSet
}

type anchored struct {
	word string
	at   int
}

type byteSet [4]uint64

func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }
func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }

var allBytes = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}

// anchors finds each keyword of the secret shapes by its rarest byte, as
// byteRank ranks them, or by a byte another keyword is found by, when
// that one is as rare as a letter can be: a pass fewer.
var anchors = func() []anchor {
	var as []anchor
	for _, keywords := range secrets.Keywords() {
		for _, w := range keywords {
			at := 0
			for i := range len(w) {
				if byteRank(w[i]) > byteRank(w[at]) {
					at = i
				}
			}
			k := slices.IndexFunc(as, func(a anchor) bool { return a.b == w[at] })
			for i := 0; k < 0 && i < len(w); i++ {
				if byteRank(w[i]) == byteRank('A') {
					if k = slices.IndexFunc(as, func(a anchor) bool { return a.b == w[i] }); k >= 0 {
						at = i
					}
				}
			}
			if k < 0 {
				k = len(as)
				as = append(as, anchor{b: w[at]})
			}
			a := &as[k]
			a.words = append(a.words, anchored{w, at})
			if at == 0 {
				a.prev = allBytes
			} else {
				a.prev.add(w[at-1])
			}
			if at+1 == len(w) {
				a.next = allBytes
			} else {
				a.next.add(w[at+1])
			}
		}
	}
	return as
}()

// byteRank ranks a byte by how rare it is in the text of model requests
// (English and JSON), the rarest highest: the letters by their frequency in
// English, capitals rarer than any, punctuation where JSON puts it.
func byteRank(b byte) int {
	const common = " \"etaoinsrhldcu:,mfpgwybv./-_k0123456789xjqz"
	if i := strings.IndexByte(common, b); i >= 0 {
		return i
	}
	return len(common)
}
