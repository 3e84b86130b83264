package catalog

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// secretsIn finds the fields of the suite's definition that look like a
// secret, with the sanitizer's secret detectors: each value as text, and
// as the value of its key (so that {"apiKey": "..."} is read as gitleaks
// reads apiKey = "..."). A problem names the field and the rule, never
// the value. Credentials' references are what a secret looks like here.
func secretsIn(s *Suite) []Problem {
	var ps []Problem
	walk("", "", s.definition(), func(field, key, value string) {
		found := secrets.Default().Find(value)
		if key != "" {
			found = append(found, secrets.Default().Assignment(key, value)...)
		}
		var rules []string
		for _, m := range found {
			if !slices.Contains(rules, m.Rule) {
				rules = append(rules, m.Rule)
			}
		}
		for _, r := range rules {
			ps = append(ps, Problem{Suite: s.ID, Field: field,
				What: fmt.Sprintf("looks like a secret (rule %s): a definition names a credential by {\"type\": \"secret_ref\", \"secretId\", \"version\": \"latest\"}, never its value", r)})
		}
	})
	return ps
}

// walk calls leaf with each string of v, its path and its key.
func walk(path, key string, v any, leaf func(field, key, value string)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
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
		leaf(path, key, v)
	}
}
