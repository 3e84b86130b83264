// Package docs_test checks the manual: README.md and the pages of docs/.
// Every link points at a file and heading that exist, every page is
// reachable from the README, and every Go block compiles against the
// module as it is, so that the manual cannot drift from the code.
package docs_test

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pages returns the manual's pages, relative to the repository root:
// README.md and every markdown file under docs/.
func pages(t *testing.T) []string {
	t.Helper()
	list := []string{"README.md"}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			list = append(list, filepath.ToSlash(filepath.Join("docs", path)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func read(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", page))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// anchors returns the anchors GitHub gives a page's headings: lower case,
// punctuation dropped, spaces as hyphens, a repeated one numbered.
func anchors(text string) map[string]bool {
	set := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		set[a] = true
	}
	return set
}

// TestLinksResolve fails on a link of the manual to a file that does not
// exist or a heading its page does not have, and on a page of docs/ that
// no chain of links from README.md reaches.
func TestLinksResolve(t *testing.T) {
	all := pages(t)
	reached := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		page := queue[0]
		queue = queue[1:]
		text := inlineCode.ReplaceAllString(fence.ReplaceAllString(read(t, page), ""), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
			}
			info, err := os.Stat(filepath.Join("..", dest))
			if err != nil {
				t.Errorf("%s: link %s: no file %s", page, target, dest)
				continue
			}
			if anchor != "" && !anchors(read(t, dest))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", page, target, dest, anchor)
			}
			if !info.IsDir() && strings.HasSuffix(dest, ".md") && !reached[dest] {
				reached[dest] = true
				queue = append(queue, dest)
			}
		}
	}
	for _, page := range all {
		if !reached[page] {
			t.Errorf("%s: no link from README.md leads to it", page)
		}
	}
}

// A block is one ```go fence of a page.
type block struct {
	line int    // the line of its first line of code
	code string // what is between the fences
	wrap string // the signature of the function it is the body of, or ""
}

// wrapMarker, on the line before a ```go fence, makes the block a function
// body: the test compiles it as `func _(PARAMS) RESULTS { BLOCK }`, so a
// fragment can use values it does not declare and return:
//
//	<!-- go: func(transport *http.Transport) error -->
//
// A block without it is a file: declarations, optionally with a package
// clause and imports. Either way the imports a block leaves out are added
// from the names it uses (the standard packages in stdImports and every
// package of this module whose name is not ambiguous).
var wrapMarker = regexp.MustCompile(`^<!-- go: func(\(.*) -->$`)

func goBlocks(text string) []block {
	var (
		blocks []block
		cur    *block
		prev   string
		code   strings.Builder
	)
	s := bufio.NewScanner(strings.NewReader(text))
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		switch {
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.code = code.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			code.WriteString(line + "\n")
		case strings.TrimSpace(line) == "```go":
			cur = &block{line: n + 1}
			code.Reset()
			if m := wrapMarker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				cur.wrap = m[1]
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return blocks
}

var stdImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "http": "net/http",
	"httptest": "net/http/httptest", "io": "io", "json": "encoding/json", "log": "log",
	"os": "os", "filepath": "path/filepath", "slices": "slices", "strings": "strings",
	"testing": "testing", "time": "time", "url": "net/url", "signal": "os/signal", "sync": "sync",
}

// moduleImports maps the name of each package of this module to its path,
// leaving out names two packages share.
func moduleImports(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string]string{}
	dup := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, _ := strings.Cut(line, " ")
		if _, ok := m[name]; ok {
			dup[name] = true
		}
		m[name] = path
	}
	for name := range dup {
		delete(m, name)
	}
	return m
}

var packageClause = regexp.MustCompile(`(?m)^package +(\w+) *\n`)

// TestGoBlocksCompile writes each page's ```go blocks as the files of one
// package (so a block may use what another block of its page declares)
// in a temporary directory inside the module, and type-checks them with
// go vet. An error names the page and the line of the block.
func TestGoBlocksCompile(t *testing.T) {
	imports := moduleImports(t)
	for k, v := range stdImports {
		imports[k] = v
	}
	root, err := os.MkdirTemp(".", "_blocks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	count := 0
	for _, page := range pages(t) {
		blocks := goBlocks(read(t, page))
		if len(blocks) == 0 {
			continue
		}
		pkg := "blocks"
		for _, b := range blocks {
			if m := packageClause.FindStringSubmatch(b.code); m != nil && m[1] == "main" {
				pkg = "main"
			}
		}
		dir := filepath.Join(root, strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(page))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, b := range blocks {
			src := compilable(t, page, b, pkg, imports)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("block%d.go", i)), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			count++
		}
	}
	if count == 0 {
		t.Fatal("no ```go block found in the manual")
	}
	cmd := exec.CommandContext(t.Context(), "go", "vet", "./...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the manual's Go blocks do not compile (go vet: %v):\n%s", err, out)
	}
}

// compilable returns the source of one block as a file of package pkg:
// its package clause replaced, wrapped in a function when it is marked
// as a body, with the imports it leaves out, and a //line directive so
// that errors point at the page.
func compilable(t *testing.T, page string, b block, pkg string, imports map[string]string) string {
	t.Helper()
	code := packageClause.ReplaceAllString(b.code, "")
	var body string
	if b.wrap != "" {
		body = fmt.Sprintf("func _%s {\n//line %s:%d\n%s}\n", b.wrap, "../"+page, b.line, code)
	} else {
		line := b.line
		if code != b.code {
			line++
		}
		body = fmt.Sprintf("//line %s:%d\n%s", "../"+page, line, code)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", "package "+pkg+"\n"+body, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("%s:%d: the block does not parse as a file (mark a fragment with <!-- go: func(...) -->): %v", page, b.line, err)
	}
	have := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		have[filepath.Base(p)] = true
		if imp.Name != nil {
			have[imp.Name.Name] = true
		}
	}
	full, err := parser.ParseFile(token.NewFileSet(), "", "package "+pkg+"\n"+body, 0)
	if err != nil {
		t.Fatalf("%s:%d: the block does not parse (mark a fragment with <!-- go: func(...) -->): %v", page, b.line, err)
	}
	var add []string
	for _, id := range full.Unresolved {
		if path, ok := imports[id.Name]; ok && !have[id.Name] {
			have[id.Name] = true
			add = append(add, strconv.Quote(path))
		}
	}
	slices.Sort(add)
	head := "package " + pkg + "\n"
	if len(add) > 0 {
		head += "\nimport (\n\t" + strings.Join(add, "\n\t") + "\n)\n"
	}
	return head + body
}

// TestTypeScriptQuickStartIsTested: the README's TypeScript block is,
// line for line, the part of examples/node-agent/test/quickstart.test.ts
// between its README markers, which the vitest suite runs.
func TestTypeScriptQuickStartIsTested(t *testing.T) {
	readme := read(t, "README.md")
	start := strings.Index(readme, "```ts\n")
	if start < 0 {
		t.Fatal("README.md has no ```ts block")
	}
	block := readme[start+len("```ts\n"):]
	block = block[:strings.Index(block, "```")]
	test := read(t, "examples/node-agent/test/quickstart.test.ts")
	_, after, ok := strings.Cut(test, "// README begin\n")
	tested, _, ok2 := strings.Cut(after, "// README end\n")
	if !ok || !ok2 {
		t.Fatal("quickstart.test.ts lacks its // README begin and // README end markers")
	}
	if block != tested {
		t.Errorf("README.md's TypeScript block differs from the tested one in examples/node-agent/test/quickstart.test.ts:\nREADME:\n%s\ntested:\n%s", block, tested)
	}
}

// testedMarker, on the line before a fence, names the test file the block
// is taken from: the block's lines must be lines of that file, one after
// another, as they are there but for their indentation.
//
//	<!-- tested: examples/agent/fixturetest/fixture_test.go -->
var testedMarker = regexp.MustCompile(`^<!-- tested: (\S+) -->$`)

// TestTestedBlocksAreTheTestedCode: every block marked as taken from a
// test is that test's code, so that an example of the manual runs in CI
// and cannot drift from what runs.
func TestTestedBlocksAreTheTestedCode(t *testing.T) {
	count := 0
	for _, page := range pages(t) {
		var prev string
		lines := strings.Split(read(t, page), "\n")
		for i := 0; i < len(lines); i++ {
			line := lines[i]
			m := testedMarker.FindStringSubmatch(strings.TrimSpace(prev))
			if strings.TrimSpace(line) != "" {
				prev = line
			}
			if m == nil || !strings.HasPrefix(strings.TrimSpace(line), "```") {
				continue
			}
			start := i + 1
			var block []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				block = append(block, strings.TrimSpace(lines[i]))
			}
			count++
			var file []string
			for _, l := range strings.Split(read(t, m[1]), "\n") {
				file = append(file, strings.TrimSpace(l))
			}
			if !containsRun(file, block) {
				t.Errorf("%s:%d: the block is not, line for line, code of %s (the file it says it is taken from)", page, start, m[1])
			}
			prev = ""
		}
	}
	if count == 0 {
		t.Fatal("no block is marked as taken from a test")
	}
}

// containsRun says whether run is in lines, one line after another.
func containsRun(lines, run []string) bool {
	for i := 0; i+len(run) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(run)], run) {
			return true
		}
	}
	return false
}
