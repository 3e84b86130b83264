package leakcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/history"
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
// rules are the exceptions of the rules the file was sanitized with
// (package sanitize's Rules.LeakRules): their notSecrets, idFields and
// notNames.
func Check(doc []byte, file string, rules Rules) ([]Finding, error) {
	if gjson.GetBytes(doc, "kind").String() == peopleKind {
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
	if stamp.Get("detectNames").Type == gjson.False {
		rules.NoNames = true
	}
	det, err := newDetectors(rules)
	if err != nil {
		return nil, err
	}
	c := &checker{det: det}
	r := &leakRun{found: c.found, member: c.det.memberHits, digest: fixedDigest, nested: map[int64]int{}}
	r.run(src)
	for _, h := range r.hits {
		found = append(found, Finding{File: file, Seq: h.seq, Path: h.path, Problem: problemOf(h.kind)})
	}
	return found, nil
}

// peopleKind is the kind of a people file (recorder export --people),
// which is refused whole.
const peopleKind = "agentvcr-people"

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

// checkShape is the part of the history format's validation that Check
// needs. A document that does not parse is named with the byte where it
// stops parsing.
func checkShape(src, file string) error {
	var v any
	if err := json.Unmarshal([]byte(src), &v); err != nil {
		// A document cut short is said as such, as history's reader
		// says it: Unmarshal would name the character it imagines at
		// the end ("invalid character ' ' in string escape code").
		if truncated(src) {
			return &history.FormatError{File: file, Offset: int64(len(src)), Err: fmt.Errorf("%w: unexpected end of input: the document is truncated", history.ErrInvalid)}
		}
		offset := int64(len(src))
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			offset = se.Offset
		}
		return &history.FormatError{File: file, Offset: offset, Err: fmt.Errorf("%w: malformed JSON: %v", history.ErrInvalid, err)}
	}
	root := gjson.Parse(src)
	switch {
	case !root.IsObject():
		return invalid(file, "", "the top level must be a JSON object")
	case root.Get("version").Raw != "1":
		return invalid(file, "version", "must be 1, got %s", typeOf(root.Get("version")))
	case !root.Get("events").IsArray():
		return invalid(file, "events", "must be an array, got %s", typeOf(root.Get("events")))
	}
	return nil
}

// truncated reports whether src is the start of a JSON value that ends
// too soon: a decoder reads it to its end and wants more.
func truncated(src string) bool {
	err := json.NewDecoder(strings.NewReader(src)).Decode(new(any))
	return errors.Is(err, io.ErrUnexpectedEOF)
}

func invalid(file, field, format string, args ...any) error {
	return &history.FormatError{File: file, Offset: -1, Field: field,
		Err: fmt.Errorf("%w: %s", history.ErrInvalid, fmt.Sprintf(format, args...))}
}

// typeOf names what a value is, for an error: never a string's text,
// which may be personal.
func typeOf(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "nothing"
	case v.Type == gjson.Number && len(v.Raw) <= 6:
		return v.Raw
	case v.Type == gjson.Number:
		return "a number"
	case v.Type == gjson.String:
		return "a string"
	case v.IsObject():
		return "an object"
	case v.IsArray():
		return "an array"
	}
	return v.Type.String()
}
