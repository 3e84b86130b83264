package sanitize

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
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
// reserved domains, no secret (gitleaks' rules, and secrets told by their
// context: an AWS secret key after its key id, curl -u, --password, -p,
// Authorization headers, credential documents by their members), no
// Slack id or workspace name that is not one of the sanitizer's fakes, no
// IP address off the documentation networks, no valid phone number (by
// its shape, or by its member's name), IBAN, card or social security
// number, and no person's name (a given name and a surname, unless the
// stamp says the name detector was off), in any string at any depth, in
// any form. A people file is refused whole. Check needs no key and learns
// nothing: it is the gate for CI over files already committed. An error
// means the file is not recorded history.
//
// Without the key, Check cannot tell the sanitizer's fake dates of birth
// and passport numbers from real ones: it does not look for them.
//
// Check reads the junior profile's rules; CheckWith reads others.
func Check(doc []byte, file string) ([]Finding, error) {
	return CheckWith(doc, file, DefaultRules())
}

// CheckWith is Check with the rules the file was sanitized with: their
// notSecrets, idFields and notNames.
func CheckWith(doc []byte, file string, rules *Rules) ([]Finding, error) {
	if IsPeopleFile(doc) {
		return []Finding{{File: file, Seq: -1, Problem: "a people file (personal data of every person of a database): never commit it; delete it from the tree"}}, nil
	}
	src := string(doc)
	if err := checkShape(src, file); err != nil {
		return nil, err
	}
	var found []Finding
	stamp := gjson.Get(src, "exporter.sanitizer")
	if !stamp.IsObject() {
		found = append(found, Finding{File: file, Seq: -1, Path: "exporter.sanitizer",
			Problem: "no sanitizer stamp: run sanitize on the raw export before committing it"})
	}
	// The name detector was on unless the stamp says it was off.
	c := &checker{det: newDetectors(rules, stamp.Get("detectNames").Type != gjson.False)}
	r := &leakRun{found: c.found, member: c.det.memberHits, fk: newFaker([]byte("agentvcr-check-digests"), nil), nested: map[int64]int{}}
	r.run(src)
	for _, h := range r.hits {
		found = append(found, Finding{File: file, Seq: h.seq, Path: h.path, Problem: problemOf(h.kind)})
	}
	return found, nil
}

// checker is Check's view of a string: the detectors only, on every form.
type checker struct {
	det   *detectors
	memo  findingsMemo
	forms formReader
}

func (c *checker) found(text string, number bool) []string {
	if number {
		return nil
	}
	if e := c.memo.get(text); e != nil {
		return e.found
	}
	var found []string
	forms := c.forms.read(text)
	for _, f := range forms {
		found = c.det.textHits(f, found)
	}
	c.memo.put(text, forms, found)
	return found
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
	case kind == "name":
		return "a person's name (a given name and a surname) that is not a sanitizer fake; a product's phrase goes in the rules' notNames"
	case kind == "ssn":
		return "US social security number outside the areas never issued (000, 666, 9xx)"
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
