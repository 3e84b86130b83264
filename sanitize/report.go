package sanitize

import (
	"runtime/debug"

	"github.com/agentvcr/agentvcr/internal/version"
)

// Report says what a Sanitizer did, in counts. It never holds an original
// value, so it can be committed beside the files it describes.
type Report struct {
	Tool           string `json:"tool"`
	Version        string `json:"version"`
	Gofakeit       string `json:"gofakeit"`
	KeyFingerprint string `json:"keyFingerprint"`
	RandomKey      bool   `json:"randomKey"`
	RulesDigest    string `json:"rulesDigest"`
	Files          int    `json:"files"`
	Rows           int    `json:"rows"`
	BytesIn        int64  `json:"bytesIn"`
	BytesOut       int64  `json:"bytesOut"`
	// Learned counts the originals learned from known fields, by kind.
	Learned map[Kind]int `json:"learned"`
	// Replaced counts replacements by kind of value.
	Replaced map[Kind]int `json:"replaced"`
	// Detectors counts replacements by what found them: "learned" for the
	// dictionary, else the detector ("email", "secret:slack-token", ...).
	Detectors map[string]int `json:"detectors"`
	// Paths counts replacements by where they were (array indexes as [#],
	// > where a document nested in a string starts, and object keys that
	// are not plain identifiers, or hold a value the sanitizer replaces,
	// as a digest), with Options.ReportPaths.
	Paths map[string]map[Kind]int `json:"paths,omitempty"`
	// NamesDetected counts the names learned from free text and from the
	// local parts of email addresses rather than from a known field, a
	// people file or a names list, by digest of the name.
	NamesDetected map[string]int `json:"namesDetected,omitempty"`
}

func newReport(fingerprint, rulesDigest string, random bool) Report {
	r := Report{Tool: "agentvcr-sanitize", Version: version.String(), Gofakeit: "unknown",
		KeyFingerprint: fingerprint, RandomKey: random, RulesDigest: rulesDigest,
		Replaced: map[Kind]int{}, Detectors: map[string]int{}, Paths: map[string]map[Kind]int{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/brianvoe/gofakeit/v7" {
				r.Gofakeit = dep.Version
			}
		}
	}
	return r
}

// add counts the replacements of one document that passed the leak check.
func (r *Report) add(edits []edit, in, out, rows int) {
	r.Files++
	r.Rows += rows
	r.BytesIn += int64(in)
	r.BytesOut += int64(out)
	for _, e := range edits {
		if e.kind == "stamp" {
			continue
		}
		r.Replaced[e.kind]++
		r.Detectors[e.detector]++
		if e.where == "" {
			continue
		}
		if r.Paths[e.where] == nil {
			r.Paths[e.where] = map[Kind]int{}
		}
		r.Paths[e.where][e.kind]++
	}
}

// detectedName counts a name the name detector or an email's local part
// gave, by digest.
func (r *Report) detectedName(digest string) {
	if r.NamesDetected == nil {
		r.NamesDetected = map[string]int{}
	}
	r.NamesDetected[digest]++
}
