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
