package fixtureservice_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentvcr/agentvcr/internal/openapitest"
)

const docURL = "https://agentvcr.invalid/fixtureservice/openapi.json"

func readDoc(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The document is OpenAPI 3.1, by the OpenAPI Initiative's schema, and
// its every schema compiles as JSON Schema 2020-12.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	openapitest.Valid(t, readDoc(t), docURL, compiler(t))
}

func compiler(t testing.TB) *jsonschema.Compiler {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readDoc(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(docURL, doc); err != nil {
		t.Fatal(err)
	}
	return c
}

// documented checks the service's answers against the document: each
// answer's route, status and body (each line of a stream) must be the
// document's. Every test's service is wrapped in it, so what the tests
// make the service answer is what the document promises clients; a
// mismatch fails the test that caused it.
type documented struct {
	t   testing.TB
	h   http.Handler
	ops []docOp

	mu       sync.Mutex
	problems []string
}

type docOp struct {
	method string
	re     *regexp.Regexp
	path   string
	// answers by status: the media type, and the schema of the body or
	// of each line.
	answers map[string]docAnswer
}

type docAnswer struct {
	mediaType string
	schema    *jsonschema.Schema
}

func newDocumented(t testing.TB, h http.Handler) *documented {
	t.Helper()
	type media struct {
		Schema json.RawMessage `json:"schema"`
	}
	type response struct {
		Ref     string           `json:"$ref"`
		Content map[string]media `json:"content"`
	}
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]response }
		Components struct{ Responses map[string]response }
	}
	if err := json.Unmarshal(readDoc(t), &doc); err != nil {
		t.Fatal(err)
	}
	c := compiler(t)
	esc := strings.NewReplacer("~", "~0", "/", "~1", "{", "%7B", "}", "%7D")
	d := &documented{t: t, h: h}
	for path, item := range doc.Paths {
		for method, op := range item {
			re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), "[^/]+") + "$")
			o := docOp{method: strings.ToUpper(method), re: re, path: path, answers: map[string]docAnswer{}}
			for status, r := range op.Responses {
				at := "#/paths/" + esc.Replace(path) + "/" + method + "/responses/" + status
				if r.Ref != "" {
					name := strings.TrimPrefix(r.Ref, "#/components/responses/")
					r, at = doc.Components.Responses[name], "#/components/responses/"+name
				}
				a := docAnswer{}
				for mt := range r.Content {
					a.mediaType = mt
					s, err := c.Compile(docURL + at + "/content/" + esc.Replace(mt) + "/schema")
					if err != nil {
						t.Fatal(err)
					}
					a.schema = s
				}
				o.answers[status] = a
			}
			d.ops = append(d.ops, o)
		}
	}
	t.Cleanup(func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		for _, p := range d.problems {
			t.Errorf("not as openapi.json says: %s", p)
		}
	})
	return d
}

func (d *documented) problem(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

func (d *documented) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &teeWriter{ResponseWriter: w}
	d.h.ServeHTTP(rec, r)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	if strings.Contains(r.URL.Path, "/control/") {
		return // the proxy's control API: control/openapi.json, checked there
	}
	var op *docOp
	for i := range d.ops {
		if d.ops[i].method == r.Method && d.ops[i].re.MatchString(r.URL.Path) {
			op = &d.ops[i]
		}
	}
	key := fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, status)
	if op == nil {
		if status != http.StatusNotFound && status != http.StatusUnauthorized && status != http.StatusForbidden {
			d.problem("%s: no such operation", key)
		}
		return
	}
	a, ok := op.answers[fmt.Sprint(status)]
	if !ok {
		d.problem("%s: %s %s documents no status %d", key, op.method, op.path, status)
		return
	}
	if ct := rec.Header().Get("Content-Type"); a.mediaType != ct && !(a.mediaType == "" && rec.body.Len() == 0) {
		d.problem("%s: Content-Type %q, documented %q", key, ct, a.mediaType)
		return
	}
	if a.schema == nil {
		return
	}
	bodies := [][]byte{rec.body.Bytes()}
	if a.mediaType == "application/x-ndjson" {
		bodies = nil
		sc := bufio.NewScanner(bytes.NewReader(rec.body.Bytes()))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			bodies = append(bodies, append([]byte(nil), sc.Bytes()...))
		}
	}
	for _, b := range bodies {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			d.problem("%s: not JSON: %.200s", key, b)
			continue
		}
		if err := a.schema.Validate(v); err != nil {
			d.problem("%s: %.300s: %v", key, b, err)
		}
	}
}

// teeWriter keeps what a handler answers, passing it on (and flushing a
// stream as it goes).
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
