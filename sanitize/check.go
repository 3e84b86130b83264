package sanitize

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/internal/secrets"
)

// Finding is one problem that Check found in a file meant for git. It
// never holds the value it is about.
type Finding struct {
	File    string `json:"file"`
	Seq     int64  `json:"seq"` // -1 outside rows
	Path    string `json:"path,omitempty"`
	Problem string `json:"problem"`
}

// Check looks at a file meant for git with the leak check's detectors: it
// must carry a sanitizer stamp, and hold no email address outside the
// reserved domains, no secret, no Slack id or workspace name that is not
// one of the sanitizer's fakes, no IP address off the documentation
// networks, no valid phone number, IBAN or card number, in any string at
// any depth, in any form. A people file is refused whole. Check needs no
// key and learns nothing: it is the gate for CI over files already
// committed. An error means the file is not recorded history.
func Check(doc []byte, file string) ([]Finding, error) {
	if IsPeopleFile(doc) {
		return []Finding{{File: file, Seq: -1, Problem: "a people file (personal data of every person of a database): never commit it; delete it from the tree"}}, nil
	}
	src := string(doc)
	if err := checkShape(src, file); err != nil {
		return nil, err
	}
	var found []Finding
	if !gjson.Get(src, "exporter.sanitizer").IsObject() {
		found = append(found, Finding{File: file, Seq: -1, Path: "exporter.sanitizer",
			Problem: "no sanitizer stamp: run sanitize on the raw export before committing it"})
	}
	fk := newFaker([]byte("agentvcr-check-digests"), nil)
	rules := DefaultRules()
	notSecrets := rules.notSecrets()
	clean := func(seg string) bool {
		for _, form := range forms(seg) {
			if len(detectorHits(form, notSecrets)) > 0 {
				return false
			}
		}
		return true
	}
	inspect(src, func(int64) {}, func(t *target) {
		if t.number {
			return
		}
		seen := map[string]bool{}
		var named []string
		if n := len(t.path) - 1; !t.key && n >= 0 && t.path[n] != ">" && t.path[n] != "[#]" && !slices.Contains(rules.IDFields, t.path[n]) && secrets.Default().Named(t.path[n]) {
			for _, m := range secrets.Default().Assignment(t.path[n], t.text) {
				if !notSecret(notSecrets, t.text, m.Start, m.End) {
					named = append(named, "secret:"+m.Rule)
				}
			}
		}
		for _, form := range forms(t.text) {
			for _, kind := range append(detectorHits(form, notSecrets), named...) {
				if seen[kind] {
					continue
				}
				seen[kind] = true
				found = append(found, Finding{File: file, Seq: t.seq, Path: hitPath(t, fk, clean), Problem: problemOf(kind)})
			}
		}
	})
	return found, nil
}

// problemOf says what a detector's hit means for a file in git.
func problemOf(kind string) string {
	switch {
	case kind == "email":
		return "email address outside the reserved domains (example.com, .example, .test, .invalid)"
	case strings.HasPrefix(kind, "secret:"):
		return "secret shape: " + strings.TrimPrefix(kind, "secret:")
	case kind == "slack-id":
		return "Slack id that is not a sanitizer fake"
	case kind == "workspace":
		return "Slack workspace name that is not a sanitizer fake"
	case kind == "ip", kind == "ipv6":
		return "IP address outside the documentation networks"
	}
	return kind + " number"
}

// checkShape is the part of learning's validation that Check needs.
func checkShape(src, file string) error {
	if !json.Valid([]byte(src)) {
		return invalid(file, "", "malformed JSON")
	}
	root := gjson.Parse(src)
	switch {
	case !root.IsObject():
		return invalid(file, "", "the top level must be a JSON object")
	case root.Get("version").Raw != "1":
		return invalid(file, "version", "must be 1, got %s", orMissing(root.Get("version")))
	case !root.Get("events").IsArray():
		return invalid(file, "events", "must be an array, got %s", orMissing(root.Get("events")))
	}
	return nil
}
