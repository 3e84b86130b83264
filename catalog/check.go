package catalog

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// secretsIn finds the fields of the suite's definition that look like a
// secret, with the sanitizer's secret detectors: each value as text, as
// it reads percent-decoded and base64-decoded, and as the value of its
// key (so that {"apiKey": "..."} is read as gitleaks reads apiKey =
// "..."); each map key as text too. A problem names the field and the
// rule, never the value; the values are returned, so that no other
// problem quotes them.
func secretsIn(s *Suite) ([]Problem, []string) {
	def, err := s.definition()
	if err != nil {
		return []Problem{{Suite: s.ID, What: err.Error()}}, nil
	}
	var ps []Problem
	var values []string
	walk("", "", def, func(field, key, value string, isKey bool) {
		var found []secrets.Match
		for _, form := range forms(value) {
			found = append(found, secrets.Default().Find(form)...)
		}
		if key != "" && !isKey {
			found = append(found, secrets.Default().Assignment(key, value)...)
		}
		var rules []string
		for _, m := range found {
			if !slices.Contains(rules, m.Rule) {
				rules = append(rules, m.Rule)
			}
		}
		if len(rules) > 0 {
			values = append(values, value)
		}
		what := "looks like a secret"
		if isKey {
			what = "has a key that looks like a secret"
		}
		for _, r := range rules {
			ps = append(ps, Problem{Suite: s.ID, Field: field,
				What: fmt.Sprintf("%s (rule %s): a definition names a credential by {\"type\": \"secret_ref\", \"secretId\", \"version\": \"latest\"}, never its value", what, r)})
		}
	})
	return ps, values
}

// forms are a text and what it reads as decoded: percent-decoded, and
// each run of base64 of 16 characters or more that decodes to text.
func forms(s string) []string {
	out := []string{s}
	if u, err := url.PathUnescape(s); err == nil && u != s {
		out = append(out, u)
	}
	for _, run := range base64Run.FindAllString(s, -1) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(run); err == nil && utf8.Valid(b) {
				out = append(out, string(b))
				break
			}
		}
	}
	return out
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`)

// walk calls leaf with each string of v, its path and its key, and
// with each map key (isKey).
func walk(path, key string, v any, leaf func(field, key, value string, isKey bool)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			at := path
			if at == "" {
				at = "(top)"
			}
			leaf(at, "", k, true)
			p := k
			if path != "" {
				p = path + "." + k
			}
			walk(p, k, v[k], leaf)
		}
	case []any:
		for i, x := range v {
			walk(path+"["+strconv.Itoa(i)+"]", key, x, leaf)
		}
	case string:
		leaf(path, key, v, false)
	}
}
