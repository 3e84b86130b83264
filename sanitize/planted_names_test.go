package sanitize_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/sanitize"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

// The tests below judge the sanitizer from outside, through its public
// API only, on the planted directory (planted_dir_test.go) with the hunt
// (hunt_test.go): code of their own that shares nothing with what they
// judge.

const plantedDirKey = "planted-dir-key-0123456789abcdef"

// loadPlantedDir reads the planted directory as a directory run does, and
// its values.
func loadPlantedDir(t *testing.T) (files map[string][]byte, p *plantedDirValues) {
	t.Helper()
	dir := filepath.Join("testdata", "planted-dir")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join("testdata", "planted-dir.json"))
	if err != nil {
		t.Fatal(err)
	}
	p = &plantedDirValues{}
	if err := json.Unmarshal(b, p); err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 || len(p.Names)+len(p.Values) < 60 {
		t.Fatalf("the planted directory has %d files and %d values; it needs several files and at least 60 values", len(files), len(p.Names)+len(p.Values))
	}
	return files, p
}

// sanitizeDirectory sanitizes files as `sanitize -o out/ in/` does: every
// file learned first, then each sanitized. It returns what was written and
// why the rest was refused.
func sanitizeDirectory(t *testing.T, files map[string][]byte) (written map[string][]byte, refused map[string]error) {
	t.Helper()
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := s.Learn(files[name], name); err != nil {
			t.Fatalf("learn %s: %v", name, err)
		}
	}
	written, refused = map[string][]byte{}, map[string]error{}
	for _, name := range names {
		out, err := s.Sanitize(files[name], name)
		if err != nil {
			refused[name] = err
			continue
		}
		written[name] = out
	}
	return written, refused
}

// describe says why a file was refused, in the sanitizer's words (kinds
// and paths, never a value).
func describe(err error) string {
	var leak *sanitize.LeakError
	if errors.As(err, &leak) {
		var hits []string
		for _, h := range leak.Hits {
			hits = append(hits, fmt.Sprintf("seq %d %s: %s", h.Seq, h.Path, h.Kind))
		}
		return fmt.Sprintf("refused, %d hits: %s", len(leak.Hits), strings.Join(hits, "; "))
	}
	return err.Error()
}

// stamp returns the sanitizer's stamp, taken from a document it wrote, to
// put on raw input: check must fail the raw input for what it holds, not
// only for the missing stamp.
func stamp(t *testing.T) json.RawMessage {
	t.Helper()
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize([]byte(`{"version":1,"surface":"web","exporter":{"tool":"agentvcr"},"events":[]}`), "empty.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Exporter struct {
			Sanitizer json.RawMessage `json:"sanitizer"`
		} `json:"exporter"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Exporter.Sanitizer) == 0 {
		t.Fatalf("no stamp in %s: %v", out, err)
	}
	return doc.Exporter.Sanitizer
}

// nestedPerRow counts, for each row, the strings at any depth that are JSON
// documents.
func nestedPerRow(t *testing.T, doc []byte) []int {
	t.Helper()
	var d struct {
		Events []any `json:"events"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var count func(v any) int
	count = func(v any) int {
		n := 0
		switch v := v.(type) {
		case string:
			if s := strings.TrimSpace(v); len(s) > 1 && (s[0] == '{' || s[0] == '[') {
				var inner any
				if json.Unmarshal([]byte(s), &inner) == nil {
					n += 1 + count(inner)
				}
			}
		case map[string]any:
			for _, x := range v {
				n += count(x)
			}
		case []any:
			for _, x := range v {
				n += count(x)
			}
		}
		return n
	}
	out := make([]int, len(d.Events))
	for i, e := range d.Events {
		out[i] = count(e)
	}
	return out
}

// TestPlantedDirectory sanitizes the planted directory as a directory run
// does and holds the output to the promise: every file written, no
// planted value left in any form, every nested document parsing, the
// base64 CODEOWNERS rewritten in place, and check passing what was written
// while failing every raw input.
func TestPlantedDirectory(t *testing.T) {
	files, p := loadPlantedDir(t)

	// The raw input holds every planted value, else the test proves
	// nothing.
	raw := map[string]*haystack{}
	for name, doc := range files {
		h, err := hayOf(doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw[name] = h
	}
	for _, n := range p.Names {
		if !slices.ContainsFunc(slices.Collect(maps.Values(raw)), func(h *haystack) bool { _, ok := h.findName(n); return ok }) {
			t.Fatalf("the planted name %q is in no raw file", n.Name)
		}
	}
	for _, v := range append(slices.Clone(p.Values), p.Measured...) {
		if !slices.ContainsFunc(slices.Collect(maps.Values(raw)), func(h *haystack) bool { return h.findValue(v) }) {
			t.Fatalf("the planted %s %q is in no raw file", v.Class, v.Value)
		}
	}

	written, refused := sanitizeDirectory(t, files)

	t.Run("every file is written", func(t *testing.T) {
		for _, name := range slices.Sorted(maps.Keys(refused)) {
			t.Errorf("%s: %s", name, describe(refused[name]))
		}
	})

	t.Run("no planted value survives in any form", func(t *testing.T) {
		measured := 0
		for _, name := range slices.Sorted(maps.Keys(written)) {
			h, err := hayOf(written[name])
			if err != nil {
				t.Fatalf("%s: the output is not JSON: %v", name, err)
			}
			for _, left := range survivorsOf(h, p) {
				t.Errorf("%s: %s survived", name, left)
			}
			for _, e := range h.emails {
				if !reservedDomain(e) {
					t.Errorf("%s: an email on a domain that is not reserved was written: %s", name, e)
				}
			}
			for _, v := range p.Measured {
				if raw[name].findValue(v) && h.findValue(v) {
					measured++
					t.Logf("stretch, measured only: %s: %s %q survived", name, v.Class, v.Value)
				}
			}
		}
		t.Logf("stretch, measured only: %d address parts survived in %d written files", measured, len(written))
	})

	t.Run("nested documents still parse", func(t *testing.T) {
		for _, name := range slices.Sorted(maps.Keys(written)) {
			in, out := nestedPerRow(t, files[name]), nestedPerRow(t, written[name])
			if len(in) != len(out) {
				t.Errorf("%s: %d rows in, %d out", name, len(in), len(out))
				continue
			}
			for i := range in {
				if in[i] != out[i] {
					t.Errorf("%s: row %d: %d nested documents in, %d out", name, i, in[i], out[i])
				}
			}
		}
	})

	t.Run("the base64 CODEOWNERS is rewritten, not refused", func(t *testing.T) {
		const name = "slack-budget-thread.json"
		out, ok := written[name]
		if !ok {
			t.Fatalf("%s was not written: %s", name, describe(refused[name]))
		}
		before, after := githubContent(t, files[name]), githubContent(t, out)
		if !githubWrapped(after) {
			t.Fatalf("the content is no longer base64 in GitHub's wrapping (60 characters a line, a newline at the end):\n%q", after)
		}
		decoded, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(after, "\n", ""))
		if err != nil {
			t.Fatalf("the content does not decode: %v", err)
		}
		original, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(before, "\n", ""))
		if bytes.Equal(decoded, original) {
			t.Fatal("the CODEOWNERS came out as it went in")
		}
		doc, _ := json.Marshal(map[string]string{"codeowners": string(decoded)})
		h, _ := hayOf(doc)
		for _, left := range survivorsOf(h, p) {
			t.Errorf("the decoded CODEOWNERS holds %s", left)
		}
		// What is not personal stays: the comment and every path.
		inLines, outLines := strings.Split(string(original), "\n"), strings.Split(string(decoded), "\n")
		if len(inLines) != len(outLines) {
			t.Fatalf("%d lines in, %d out:\n%s", len(inLines), len(outLines), decoded)
		}
		for i := range inLines {
			if strings.HasPrefix(inLines[i], "#") && inLines[i] != outLines[i] {
				t.Errorf("line %d: the comment changed: %q", i, outLines[i])
			}
			if f := strings.Fields(inLines[i]); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
				if g := strings.Fields(outLines[i]); len(g) == 0 || g[0] != f[0] {
					t.Errorf("line %d: the path %q became %q", i, f[0], outLines[i])
				}
			}
		}
	})

	t.Run("check passes what was written", func(t *testing.T) {
		for _, name := range slices.Sorted(maps.Keys(written)) {
			found, err := leakcheck.Check(written[name], name, sanitize.DefaultRules().LeakRules())
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for _, f := range found {
				t.Errorf("%s: check: seq %d %s: %s", name, f.Seq, f.Path, f.Problem)
			}
		}
	})

	t.Run("check fails every raw input, stamped", func(t *testing.T) {
		st := stamp(t)
		for _, name := range slices.Sorted(maps.Keys(files)) {
			doc := bytes.Replace(files[name], []byte(`"exporter": {`), append(append([]byte(`"exporter": {"sanitizer": `), st...), ','), 1)
			if bytes.Equal(doc, files[name]) {
				t.Fatalf("%s: no exporter to stamp", name)
			}
			found, err := leakcheck.Check(doc, name, sanitize.DefaultRules().LeakRules())
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(found) == 0 {
				t.Errorf("%s: check passed the raw input", name)
			}
			t.Logf("%s: check found %d problems in the raw input", name, len(found))
		}
	})

	t.Run("reports and refusals hold no planted value", func(t *testing.T) {
		s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey), ReportPaths: true})
		if err != nil {
			t.Fatal(err)
		}
		var side []any
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if err := s.Learn(files[name], name); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if _, err := s.Sanitize(files[name], name); err != nil {
				side = append(side, err.Error(), err)
			}
			found, _ := leakcheck.Check(files[name], name, sanitize.DefaultRules().LeakRules())
			side = append(side, found)
		}
		side = append(side, s.Report())
		b, err := json.Marshal(side)
		if err != nil {
			t.Fatal(err)
		}
		h, err := hayOf(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, left := range survivorsOf(h, p) {
			t.Errorf("a report, a refusal or a check finding holds %s", left)
		}
	})

	// Measured, not asserted: which planted values check finds on its
	// own, each in the line of raw text it was planted in, the other
	// planted values of that line masked, stamped.
	t.Run("check alone, value by value (measured)", func(t *testing.T) {
		st := stamp(t)
		var lines []string
		var hays []*haystack
		seen := map[string]bool{}
		for _, name := range slices.Sorted(maps.Keys(files)) {
			ts, _ := texts(files[name])
			for _, text := range ts {
				for _, line := range strings.Split(text, "\n") {
					if !seen[line] && strings.TrimSpace(line) != "" {
						seen[line] = true
						lines = append(lines, line)
						hays = append(hays, textHay(line))
					}
				}
			}
		}
		mask := func(line string, keep string) string {
			for _, n := range p.Names {
				if n.Name != keep {
					line = strings.ReplaceAll(line, n.Name, "someone")
				}
			}
			for _, v := range p.Values {
				if v.Value != keep && len(v.Value) > 3 {
					line = strings.ReplaceAll(line, v.Value, "something")
				}
			}
			return line
		}
		type tally struct{ found, total int }
		byClass := map[string]*tally{}
		var missed []string
		try := func(class, value string, in func(*haystack) bool) {
			for i, line := range lines {
				if !in(hays[i]) {
					continue
				}
				doc := proseDoc([]string{mask(line, value)})
				doc = bytes.Replace(doc, []byte(`"exporter":{`), append(append([]byte(`"exporter":{"sanitizer":`), st...), ','), 1)
				found, err := leakcheck.Check(doc, "one-value.json", sanitize.DefaultRules().LeakRules())
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				if byClass[class] == nil {
					byClass[class] = &tally{}
				}
				byClass[class].total++
				if len(found) > 0 {
					byClass[class].found++
				} else {
					missed = append(missed, fmt.Sprintf("%s %q", class, value))
				}
				return
			}
		}
		for _, n := range p.Names {
			try(n.Script+" name, "+n.Class, n.Name, func(h *haystack) bool { _, ok := h.findName(n); return ok })
		}
		for _, v := range p.Values {
			try(v.Class, v.Value, func(h *haystack) bool { return h.findValue(v) })
		}
		for _, class := range slices.Sorted(maps.Keys(byClass)) {
			t.Logf("check alone finds %d of %d: %s", byClass[class].found, byClass[class].total, class)
		}
		t.Logf("check alone misses: %s", strings.Join(missed, ", "))
	})
}

// githubWrapped says whether s is base64 as GitHub's contents API writes
// it: the standard alphabet, padded, 60 characters a line, a newline after
// every line.
func githubWrapped(s string) bool {
	lines := strings.Split(s, "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" {
		return false
	}
	lines = lines[:len(lines)-1]
	body := regexp.MustCompile(`^[A-Za-z0-9+/]+={0,2}$`)
	for i, l := range lines {
		last := i == len(lines)-1
		if !body.MatchString(l) || !last && (len(l) != 60 || strings.Contains(l, "=")) || last && len(l) > 60 {
			return false
		}
	}
	return len(strings.Join(lines, ""))%4 == 0
}

// githubContent returns the content member of the GitHub contents API
// result in a document: a tool result's text, a JSON document in the
// model message, itself a JSON document in payload.message.
func githubContent(t *testing.T, doc []byte) string {
	t.Helper()
	var d struct {
		Events []struct {
			Type    string `json:"type"`
			Payload struct {
				Message string `json:"message"`
			} `json:"payload"`
		} `json:"events"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Events {
		if e.Type != "tool_result" {
			continue
		}
		var m struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(e.Payload.Message), &m); err != nil {
			t.Fatalf("a tool result's message does not parse: %v", err)
		}
		for _, c := range m.Content {
			var api struct {
				Type, Encoding, Content string
			}
			if json.Unmarshal([]byte(c.Text), &api) == nil && api.Encoding != "" {
				if api.Encoding != "base64" || api.Type != "file" {
					t.Fatalf("the contents API result says type %q, encoding %q", api.Type, api.Encoding)
				}
				return api.Content
			}
		}
	}
	t.Fatal("no GitHub contents API result")
	return ""
}
