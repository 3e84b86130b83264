package sanitize_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/sanitize"
)

// The free-text name detector's quality, measured black-box through
// Sanitize: recall and precision on the planted directory's prose, false
// positives on name-free technical prose (this repository's README and Go
// doc comments), and product phrases that must come through.

// proseDoc wraps texts into recorded history, one message row each,
// written by the agent (a bot, whose name is not personal).
func proseDoc(texts []string) []byte {
	var rows []any
	for i, text := range texts {
		id := fmt.Sprintf("turn_api-msg_%024x:assistant:1", i+1)
		rows = append(rows, pdObj{{"createdAtMs", 1790500000000 + int64(i)*1000}, {"historyVersion", 0}, {"idempotencyKey", "message:" + id},
			{"payload", pdObj{{"messageId", id}, {"role", "assistant"}, {"text", text},
				{"meta", pdObj{{"author", pdObj{{"isBot", true}, {"userName", "junior"}}}, {"source", "web"}}}}},
			{"schemaVersion", 1}, {"seq", i}, {"type", "message"}})
	}
	return pdJS(pdObj{{"version", 1}, {"surface", "web"}, {"exporter", pdObj{{"tool", "agentvcr"}, {"profile", "junior"}}}, {"events", rows}})
}

// proseTexts reads the texts back from a document proseDoc wrote and the
// sanitizer rewrote.
func proseTexts(t *testing.T, doc []byte) []string {
	t.Helper()
	var d struct {
		Events []struct {
			Payload struct {
				Text string `json:"text"`
			} `json:"payload"`
		} `json:"events"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range d.Events {
		out = append(out, e.Payload.Text)
	}
	return out
}

// messageTexts returns the text of every message row of a document: the
// conversation's prose, as people and the agent wrote it.
func messageTexts(t *testing.T, doc []byte) []string {
	t.Helper()
	var d struct {
		Events []struct {
			Type    string `json:"type"`
			Payload struct {
				Text string `json:"text"`
			} `json:"payload"`
		} `json:"events"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range d.Events {
		if e.Type == "message" && e.Payload.Text != "" {
			out = append(out, e.Payload.Text)
		}
	}
	return out
}

// textHay is the hunt's haystack of one text.
func textHay(text string) *haystack {
	doc, _ := json.Marshal(map[string]string{"text": text})
	h, err := hayOf(doc)
	if err != nil {
		panic(err)
	}
	return h
}

var capitalised = regexp.MustCompile(`\p{L}[\p{L}\p{M}'’-]*`)

// capitalisedPairs counts the pairs of capitalised words one space apart:
// "Chat Completions", "Tunde Bakare".
func capitalisedPairs(text string) map[string]int {
	out := map[string]int{}
	locs := capitalised.FindAllStringIndex(text, -1)
	isCap := func(w string) bool {
		r, n := utf8.DecodeRuneInString(w)
		return unicode.IsUpper(r) && strings.IndexFunc(w[n:], unicode.IsLower) >= 0
	}
	for i := 1; i < len(locs); i++ {
		a, b := text[locs[i-1][0]:locs[i-1][1]], text[locs[i][0]:locs[i][1]]
		if text[locs[i-1][1]:locs[i][0]] == " " && isCap(a) && isCap(b) {
			out[a+" "+b]++
		}
	}
	return out
}

// TestNameDetectorRecallAndPrecision measures the free-text name detector
// on the planted directory's prose, each message sanitized on its own by a
// Sanitizer that learned the whole directory. Recall: of the Latin-script
// full names of people in no identity and with no email anywhere, the
// fraction that no longer appear in any form; it must be at least 0.9.
// Precision: of the pairs of capitalised words the sanitizer changed, the
// fraction that hold a planted name.
func TestNameDetectorRecallAndPrecision(t *testing.T) {
	files, p := loadPlantedDir(t)
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(files))
	for _, name := range names {
		if err := s.Learn(files[name], name); err != nil {
			t.Fatal(err)
		}
	}
	nameParts := map[string]bool{}
	for _, n := range p.Names {
		for _, part := range strings.Fields(n.Name) {
			nameParts[part] = true
		}
	}
	type tally struct{ found, total int }
	recall := map[string]*tally{}
	var missed []string
	truePairs, falsePairs := 0, 0
	var falseList []string
	for _, name := range names {
		for i, text := range messageTexts(t, files[name]) {
			out, err := s.Sanitize(proseDoc([]string{text}), fmt.Sprintf("%s#%d", name, i))
			if err != nil {
				t.Errorf("%s, message %d: %s", name, i, describe(err))
				continue
			}
			after := proseTexts(t, out)[0]
			in, left := textHay(text), textHay(after)
			for _, n := range p.Names {
				if _, ok := in.findName(n); !ok {
					continue
				}
				key := n.Script
				if n.Script == "latin" {
					key = "latin " + n.Class
				}
				if recall[key] == nil {
					recall[key] = &tally{}
				}
				recall[key].total++
				if form, ok := left.findName(n); ok {
					missed = append(missed, fmt.Sprintf("%s %q (as %q) in %s", key, n.Name, form, name))
				} else {
					recall[key].found++
				}
			}
			pairsIn, pairsOut := capitalisedPairs(text), capitalisedPairs(after)
			for pair, n := range pairsIn {
				changed := n - pairsOut[pair]
				if changed <= 0 {
					continue
				}
				a, b, _ := strings.Cut(pair, " ")
				possessive := strings.NewReplacer("'s", "", "’s", "")
				if nameParts[possessive.Replace(a)] || nameParts[possessive.Replace(b)] {
					truePairs += changed
				} else {
					falsePairs += changed
					falseList = append(falseList, pair)
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(recall)) {
		r := recall[key]
		t.Logf("recall, %s: %d of %d (%.2f)", key, r.found, r.total, float64(r.found)/float64(r.total))
	}
	for _, m := range missed {
		t.Logf("missed: %s", m)
	}
	if truePairs+falsePairs > 0 {
		t.Logf("precision: %d of %d changed capitalised pairs hold a planted name (%.2f); not names: %q",
			truePairs, truePairs+falsePairs, float64(truePairs)/float64(truePairs+falsePairs), falseList)
	} else {
		t.Log("precision: no capitalised pair was changed")
	}
	free := recall["latin free-text"]
	if free == nil || free.total < 20 {
		t.Fatalf("the prose holds too few Latin-script free-text names to measure recall: %v", free)
	}
	if r := float64(free.found) / float64(free.total); r < 0.9 {
		t.Errorf("recall on Latin-script full names in no identity and with no email: %.2f (%d of %d); the target is 0.9", r, free.found, free.total)
	}
}

// examplePeople are the people the repository's own prose names as
// examples of what the sanitizer replaces (its own and the issue's);
// changing them is no false positive.
var examplePeople = map[string]bool{
	"Ada": true, "Quill": true, "Bo": true, "Rivet": true, "Cy": true, "José": true, "Jose": true, "JOSE": true,
	"Núñez": true, "Nunez": true, "Liam": true, "Nadia": true, "Noor": true, "NadiaNoor": true, "Anne": true,
	"Marie": true, "AnneMarie": true, "Anne-Marie": true, "Dana": true, "Priya": true,
	"Corin": true, "Abbot": true, "Imogen": true, "Hale": true, "Tunde": true, "Bakare": true, "Lucía": true, "Lucia": true,
	"Ferrer": true, "Oskar": true, "Lindqvist": true, "Иван": true, "Петров": true, "Ивану": true, "Петрову": true,
	"Ивана": true, "Петрова": true,
}

// repositoryProse returns this repository's README, its markdown under
// docs/ and the doc comments of its Go packages, as paragraphs, code blocks
// left out.
func repositoryProse(t *testing.T) []string {
	t.Helper()
	root := ".."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var paragraphs []string
	add := func(text string, indentedCode bool) {
		var para []string
		flush := func() {
			if p := strings.TrimSpace(strings.Join(para, "\n")); p != "" {
				paragraphs = append(paragraphs, p)
			}
			para = nil
		}
		fenced := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				flush()
				continue
			}
			if fenced || indentedCode && (strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ")) {
				continue
			}
			if strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			para = append(para, line)
		}
		flush()
	}
	add(string(readme), false)
	// The pages of the manual under docs/.
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*", "*.md"))
	for _, path := range append(docs, more...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		add(string(b), false)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "node_modules" || n == "vendor" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var doc *ast.CommentGroup
			switch n := n.(type) {
			case *ast.File:
				doc = n.Doc
			case *ast.FuncDecl:
				doc = n.Doc
			case *ast.GenDecl:
				doc = n.Doc
			case *ast.TypeSpec:
				doc = n.Doc
			case *ast.ValueSpec:
				doc = n.Doc
			case *ast.Field:
				doc = n.Doc
			}
			if doc != nil {
				add(doc.Text(), true)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paragraphs
}

// plainWords counts the tokens of a text that are words: letters, with
// an apostrophe or hyphen inside, once the punctuation around them is
// trimmed. Ids, emails, paths, URLs and secrets have other characters and
// are not counted: replacing them is not the name detector's doing.
func plainWords(text string) map[string]int {
	out := map[string]int{}
	word := regexp.MustCompile(`^\p{L}[\p{L}\p{M}]*(?:['’-]\p{L}[\p{L}\p{M}]*)*$`)
	for _, tok := range strings.Fields(text) {
		tok = strings.TrimFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if word.MatchString(tok) {
			out[tok]++
		}
	}
	return out
}

// TestNameDetectorFalsePositivesOnProse sanitizes this repository's README
// and Go doc comments, name-free technical prose but for the people they
// name as examples, as a directory run does (every document learned
// first, so a word taken for a name once is replaced everywhere), and
// counts the words the sanitizer changed that are not personal values: at
// most 0.1 per KB.
func TestNameDetectorFalsePositivesOnProse(t *testing.T) {
	paragraphs := repositoryProse(t)
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	batches := slices.Collect(slices.Chunk(paragraphs, 50))
	for i, batch := range batches {
		if err := s.Learn(proseDoc(batch), fmt.Sprintf("prose-%d.json", i)); err != nil {
			t.Fatal(err)
		}
	}
	size, falsePositives, refused := 0, 0, 0
	changed := map[string]int{}
	var examples []string
	measure := func(in, out string) {
		size += len(in)
		before, after := plainWords(in), plainWords(out)
		found := false
		for w, n := range before {
			if d := n - after[w]; d > 0 && !examplePeople[w] {
				falsePositives += d
				changed[w] += d
				found = true
			}
		}
		if a, b := strings.Fields(in), strings.Fields(out); found && len(examples) < 12 {
			// The first difference, after the common start.
			j := 0
			for j < len(a) && j < len(b) && (a[j] == b[j] || examplePeople[strings.Trim(a[j], "`(),.;:")]) {
				j++
			}
			if j < len(a) {
				lo := max(0, j-4)
				examples = append(examples, fmt.Sprintf("%q became %q", strings.Join(a[lo:min(len(a), j+3)], " "), strings.Join(b[lo:min(len(b), j+6)], " ")))
			}
		}
	}
	for i, batch := range batches {
		out, err := s.Sanitize(proseDoc(batch), fmt.Sprintf("prose-%d.json", i))
		if err == nil {
			for i, text := range proseTexts(t, out) {
				measure(batch[i], text)
			}
			continue
		}
		// Find the paragraphs that are refused, and measure the others.
		for _, p := range batch {
			out, err := s.Sanitize(proseDoc([]string{p}), "paragraph.json")
			if err != nil {
				refused++
				if refused <= 3 {
					t.Logf("refused: %s\n%s", describe(err), p)
				}
				continue
			}
			measure(p, proseTexts(t, out)[0])
		}
	}
	perKB := float64(falsePositives) / (float64(size) / 1024)
	t.Logf("false positives: %d words changed in %d paragraphs, %.0f KB of prose: %.3f per KB; %d paragraphs refused",
		falsePositives, len(paragraphs), float64(size)/1024, perKB, refused)
	if len(changed) > 0 {
		t.Logf("changed words that are not personal values: %v", changed)
		for _, e := range examples {
			t.Logf("for example: %s", e)
		}
	}
	if size < 100<<10 {
		t.Fatalf("only %d bytes of prose: the README or the doc comments were not found", size)
	}
	if perKB > 0.1 {
		t.Errorf("%.3f false positives per KB of name-free prose; the target is at most 0.1", perKB)
	}
	if refused > 0 {
		t.Errorf("%d paragraphs of the repository's prose were refused (the first are logged above)", refused)
	}
}

// TestProductPhrasesComeThrough: capitalised phrases that name products,
// features and places, not people, are written as they were.
func TestProductPhrasesComeThrough(t *testing.T) {
	texts := []string{
		"We moved the assistant from Chat Completions to the Responses API, and the Web API client builds with Go Modules now.",
		"Every Pull Request runs the Release Checklist before it enters the Merge Queue.",
		"Chat Completions streams deltas; the Anthropic Messages API streams content blocks, and Google Sheets gets the summary.",
		"Open a Pull Request against the Web API repository, then ask in Slack Connect; Feature Flags gate the rollout in North America.",
		"Hugging Face models run on Cloud Run behind the Service Account of the Data Platform team; Visual Studio Code shows the Go Modules graph.",
		"Status Page, Incident Review and Release Notes are linked from the Developer Portal.",
	}
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize(proseDoc(texts), "phrases.json")
	if err != nil {
		t.Fatalf("refused: %s", describe(err))
	}
	for i, got := range proseTexts(t, out) {
		if got != texts[i] {
			t.Errorf("changed:\n in: %s\nout: %s", texts[i], got)
		}
	}
}
