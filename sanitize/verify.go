package sanitize

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/internal/secrets"
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

// verify checks sanitized output with one more pass over its raw bytes:
// for every learned original in every form it takes there (as is,
// JSON-escaped once and twice, XML-escaped), wherever it stands (strings,
// keys, numbers), and for every secret shape. It does not trust the
// rewrite: whatever it finds is a hit.
func (s *Sanitizer) verify(out string) []Hit {
	if !gjson.Valid(out) {
		return []Hit{{Seq: -1, Kind: "invalid JSON"}}
	}
	d := &s.dict
	secretsAt := map[int][]int{}
	found := d.matcher.find(out, func(trig, pos int) {
		if trig < len(secretRules) {
			secretsAt[trig] = append(secretsAt[trig], pos)
		}
	})
	var hits []Hit
	var rows rowRanges
	locate := func(off int) (int64, string) {
		if rows == nil {
			rows = rowSpans(out)
		}
		return rows.seqAt(off), pathAt(out, off)
	}
	for _, m := range found {
		e := d.list[m.payload&^formMask]
		seq, path := locate(m.start)
		hits = append(hits, Hit{Seq: seq, Path: path, Kind: string(e.kind), Digest: s.fk.digest(e.kind, e.value)})
	}
	for _, sp := range secretSpans(out, secretsAt, s.fk, nil) {
		seq, path := locate(sp.start)
		hits = append(hits, Hit{Seq: seq, Path: path, Kind: sp.detector})
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
	if err := checkShape(src, file); err != nil {
		return nil, err
	}
	var found []Finding
	if !gjson.Get(src, "exporter.sanitizer").IsObject() {
		found = append(found, Finding{File: file, Seq: -1, Path: "exporter.sanitizer",
			Problem: "no sanitizer stamp: run sanitize on the raw export before committing it"})
	}
	w := &walker{visit: func(w *walker, str string) {
		for _, e := range findEmails(str) {
			if !reservedEmail(str[e[0]:e[1]]) {
				found = append(found, Finding{File: file, Seq: w.seq, Path: w.where(),
					Problem: "email address outside the reserved domains (example.com, .example, .test, .invalid)"})
			}
		}
		if rule := secrets.First(str); rule != "" {
			found = append(found, Finding{File: file, Seq: w.seq, Path: w.where(), Problem: "secret shape: " + rule})
		}
	}}
	w.document(src)
	return found, nil
}

// checkShape is the part of learning's validation that Check needs.
func checkShape(src, file string) error {
	if !gjson.Valid(src) {
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
