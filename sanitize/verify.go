package sanitize

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// ErrLeak is matched by the error of a Sanitize that found personal data or
// a secret in its own output, and wrote nothing.
var ErrLeak = errors.New("personal data or secrets survived sanitizing")

// Hit is one value the leak check found. It never holds the value: only
// where it is, what kind it is, and a digest of it under the key.
type Hit struct {
	Seq    int64  `json:"seq"` // -1 outside rows
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Digest string `json:"digest,omitempty"`
}

// LeakError lists what survived in one file.
type LeakError struct {
	File string
	Hits []Hit
}

func (e *LeakError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: refusing to write: %v:", orInput(e.File), ErrLeak)
	for i, h := range e.Hits {
		if i == 10 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Hits)-10)
			break
		}
		if i > 0 {
			b.WriteByte(';')
		}
		if h.Seq >= 0 {
			fmt.Fprintf(&b, " row seq %d", h.Seq)
		}
		fmt.Fprintf(&b, " %s: %s", h.Path, h.Kind)
		if h.Digest != "" {
			fmt.Fprintf(&b, " (digest %s)", h.Digest)
		}
	}
	return b.String()
}

func (e *LeakError) Unwrap() error { return ErrLeak }

// verify checks sanitized output, independently of how it was rewritten:
// every string and key, decoded and at any depth of nested JSON, for every
// learned original and every secret shape; then the raw bytes, for the
// originals in any written form (numbers, escapes the walk did not see).
func (s *Sanitizer) verify(out string) []Hit {
	if !gjson.Valid(out) {
		return []Hit{{Seq: -1, Kind: "invalid JSON"}}
	}
	d := &s.dict
	var hits []Hit
	seen := map[string]bool{}
	w := &walker{visit: func(w *walker, str string) []edit {
		for _, m := range d.verifyText.find(str) {
			e := d.list[m.payload&^formMask]
			hits = append(hits, Hit{Seq: w.seq, Path: w.where(false), Kind: string(e.kind), Digest: s.fk.digest(e.kind, e.value)})
			seen[fmt.Sprint(w.seq, m.payload&^formMask)] = true
		}
		if rule := hasSecret(str); rule != "" {
			hits = append(hits, Hit{Seq: w.seq, Path: w.where(false), Kind: "secret:" + rule})
		}
		return nil
	}}
	w.document(out)

	if raw := d.verifyRaw.find(out); len(raw) > 0 {
		rows := rowSpans(out)
		for _, m := range raw {
			idx := m.payload &^ formMask
			seq := rows.seqAt(m.start)
			if seen[fmt.Sprint(seq, idx)] {
				continue
			}
			e := d.list[idx]
			hits = append(hits, Hit{Seq: seq, Path: "(raw bytes)", Kind: string(e.kind), Digest: s.fk.digest(e.kind, e.value)})
		}
	}
	return hits
}

// rowRanges maps byte offsets of a document to the seq of the row there.
type rowRanges []struct {
	start, end int
	seq        int64
}

func rowSpans(doc string) rowRanges {
	var r rowRanges
	gjson.Get(doc, "events").ForEach(func(_, row gjson.Result) bool {
		r = append(r, struct {
			start, end int
			seq        int64
		}{row.Index, row.Index + len(row.Raw), row.Get("seq").Int()})
		return true
	})
	return r
}

func (r rowRanges) seqAt(off int) int64 {
	i := sort.Search(len(r), func(i int) bool { return r[i].end > off })
	if i < len(r) && r[i].start <= off {
		return r[i].seq
	}
	return -1
}

// Finding is one problem that Check found in a file meant for git.
type Finding struct {
	File    string `json:"file"`
	Seq     int64  `json:"seq"` // -1 outside rows
	Path    string `json:"path,omitempty"`
	Problem string `json:"problem"`
}

// Check looks at a file meant for git: it must carry a sanitizer stamp, and
// hold no email address outside the reserved domains and no secret shape.
// It needs no key and learns nothing: it is the gate for CI over files
// already committed. An error means the file is not recorded history.
func Check(doc []byte, file string) ([]Finding, error) {
	src := string(doc)
	root, err := validate(src, file)
	if err != nil {
		return nil, err
	}
	var found []Finding
	if !root.Get("exporter.sanitizer").IsObject() {
		found = append(found, Finding{File: file, Seq: -1, Path: "exporter.sanitizer",
			Problem: "no sanitizer stamp: run sanitize on the raw export before committing it"})
	}
	w := &walker{visit: func(w *walker, str string) []edit {
		for _, e := range findEmails(str) {
			if !reservedEmail(str[e[0]:e[1]]) {
				found = append(found, Finding{File: file, Seq: w.seq, Path: w.where(false),
					Problem: "email address outside the reserved domains (example.com, .example, .test, .invalid)"})
			}
		}
		if rule := hasSecret(str); rule != "" {
			found = append(found, Finding{File: file, Seq: w.seq, Path: w.where(false), Problem: "secret shape: " + rule})
		}
		return nil
	}}
	w.document(src)
	return found, nil
}
