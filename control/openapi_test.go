package control

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentvcr/agentvcr/internal/openapitest"
)

// docURL is where the tests place the control API's OpenAPI document for
// the schema compiler; nothing is fetched from it.
const docURL = "https://agentvcr.invalid/openapi.json"

// The OpenAPI document is valid OpenAPI 3.1, by the OpenAPI Initiative's
// own schema for 3.1 documents, and every schema in it is a valid JSON
// Schema 2020-12 schema.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	openapitest.Valid(t, openAPI, docURL, newSchemaCompiler(t))
}

// Every route the control API serves is in the OpenAPI document, and the
// document lists no route the control API does not serve: a route cannot
// be added, or removed, without the document saying so.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	served := map[string]bool{}
	for _, pattern := range (&api{}).routes().patterns {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			t.Errorf("route %q has no method: every route names the one it serves", pattern)
			continue
		}
		served[method+" "+path] = true
	}
	documented := map[string]bool{}
	for _, op := range loadAPIDoc(t).ops {
		documented[op.key()] = true
	}
	for r := range served {
		if !documented[r] {
			t.Errorf("the control API serves %s, which control/openapi.json does not describe", r)
		}
	}
	for r := range documented {
		if !served[r] {
			t.Errorf("control/openapi.json describes %s, which the control API does not serve", r)
		}
	}
}

// apiDoc is the control API's OpenAPI document, compiled to check
// answers against it.
type apiDoc struct {
	ops []*apiOp
	// errs is the schema of {"error": "..."}, which a call to no route
	// gets too.
	errs *jsonschema.Schema
}

// apiOp is one operation of the document.
type apiOp struct {
	method string
	path   string         // the template: /v1/scopes/{name}/end
	re     *regexp.Regexp // the paths it matches
	// answers by status: the media type documented ("" for no body) and
	// the schema of the body (for text/event-stream, of each data line).
	answers map[string]apiAnswer
}

type apiAnswer struct {
	mediaType string
	schema    *jsonschema.Schema
}

func (op *apiOp) key() string { return op.method + " " + op.path }

// newSchemaCompiler returns a compiler that holds the document at docURL
// and asserts formats (date-time).
func newSchemaCompiler(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPI))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource(docURL, doc); err != nil {
		t.Fatal(err)
	}
	return c
}

// pointer escapes a JSON pointer token for a URL fragment.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, tok := range tokens {
		tok = strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
		b.WriteString("/" + strings.NewReplacer("{", "%7B", "}", "%7D").Replace(tok))
	}
	return b.String()
}

// loadAPIDoc compiles the answers of every operation of the document.
func loadAPIDoc(t *testing.T) *apiDoc {
	t.Helper()
	type mediaType struct {
		Schema  json.RawMessage `json:"schema"`
		SSEData *struct {
			Ref string `json:"$ref"`
		} `json:"x-sse-data"`
	}
	type response struct {
		Ref     string               `json:"$ref"`
		Content map[string]mediaType `json:"content"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Responses map[string]response `json:"responses"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	c := newSchemaCompiler(t)
	errs, err := c.Compile(docURL + "#/components/schemas/Error")
	if err != nil {
		t.Fatal(err)
	}
	d := &apiDoc{errs: errs}
	for path, item := range doc.Paths {
		for method, raw := range item {
			var op struct {
				Responses map[string]response `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("paths.%s.%s: %v", path, method, err)
			}
			re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), "[^/]+") + "$")
			o := &apiOp{method: strings.ToUpper(method), path: path, re: re, answers: map[string]apiAnswer{}}
			for status, r := range op.Responses {
				at := pointer("paths", path, method, "responses", status)
				if r.Ref != "" {
					name := strings.TrimPrefix(r.Ref, "#/components/responses/")
					r, at = doc.Components.Responses[name], pointer("components", "responses", name)
				}
				if len(r.Content) > 1 {
					t.Fatalf("%s %s %s: more than one media type", o.key(), status, at)
				}
				var a apiAnswer
				for mt, m := range r.Content {
					a.mediaType = mt
					loc := docURL + "#" + at + pointer("content", mt, "schema")
					if m.SSEData != nil {
						loc = docURL + m.SSEData.Ref
					}
					sch, err := c.Compile(loc)
					if err != nil {
						t.Fatalf("%s %s: %v", o.key(), status, err)
					}
					a.schema = sch
				}
				o.answers[status] = a
			}
			d.ops = append(d.ops, o)
		}
	}
	slices.SortFunc(d.ops, func(a, b *apiOp) int { return strings.Compare(a.key(), b.key()) })
	return d
}

// find returns the operation of a call.
func (d *apiDoc) find(method, path string) *apiOp {
	for _, op := range d.ops {
		if op.method == method && op.re.MatchString(path) {
			return op
		}
	}
	return nil
}

// checkedTransport checks every answer of the control API against the
// OpenAPI document as it arrives: its status is one the operation lists,
// its media type and body are as documented, and a stream's every event
// is. It reports what does not match with t.Errorf, and which operations
// it saw answer.
type checkedTransport struct {
	t   *testing.T
	doc *apiDoc
	mu  sync.Mutex
	saw map[string]bool // "METHOD /template STATUS"
}

func newCheckedTransport(t *testing.T) *checkedTransport {
	return &checkedTransport{t: t, doc: loadAPIDoc(t), saw: map[string]bool{}}
}

func (ct *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	call := req.Method + " " + req.URL.Path
	op := ct.doc.find(req.Method, req.URL.Path)
	var a apiAnswer
	if op == nil {
		// No such route: the API's error, 404 or 405.
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			ct.t.Errorf("%s: not in the OpenAPI document, yet answered %s", call, resp.Status)
		}
		a = apiAnswer{mediaType: "application/json", schema: ct.doc.errs}
	} else {
		var ok bool
		if a, ok = op.answers[fmt.Sprint(resp.StatusCode)]; !ok {
			ct.t.Errorf("%s answered %s, which the OpenAPI document does not list for %s", call, resp.Status, op.key())
			return resp, nil
		}
		ct.mu.Lock()
		ct.saw[fmt.Sprintf("%s %d", op.key(), resp.StatusCode)] = true
		ct.mu.Unlock()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case a.mediaType == "":
		b, _ := io.ReadAll(resp.Body)
		if len(b) > 0 {
			ct.t.Errorf("%s answered %s with a body, where the document has none: %q", call, resp.Status, b)
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	case mt != a.mediaType:
		ct.t.Errorf("%s answered %s as %q; the document says %q", call, resp.Status, mt, a.mediaType)
	case mt == "text/event-stream":
		resp.Body = &checkedStream{ReadCloser: resp.Body, t: ct.t, call: call, schema: a.schema}
	default:
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			ct.t.Errorf("%s answered %s with a body that is not JSON: %v: %q", call, resp.Status, err, b)
			break
		}
		if err := a.schema.Validate(v); err != nil {
			ct.t.Errorf("%s answered %s with %s, which is not as the OpenAPI document says: %v", call, resp.Status, b, err)
		}
	}
	return resp, nil
}

// seen reports whether an operation answered with status.
func (ct *checkedTransport) seen(key string, status int) bool {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.saw[fmt.Sprintf("%s %d", key, status)]
}

// checkedStream checks each event of an SSE stream as it is read: its
// data line against schema, and its id and event fields against the data.
type checkedStream struct {
	io.ReadCloser
	t      *testing.T
	call   string
	schema *jsonschema.Schema
	buf    []byte
}

func (s *checkedStream) Read(b []byte) (int, error) {
	n, err := s.ReadCloser.Read(b)
	s.buf = append(s.buf, b[:n]...)
	for {
		i := bytes.Index(s.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		s.check(string(s.buf[:i]))
		s.buf = s.buf[i+2:]
	}
	return n, err
}

func (s *checkedStream) check(msg string) {
	fields := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(msg))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, ":") {
			continue // a comment
		}
		name, value, _ := strings.Cut(line, ":")
		fields[name] = append(fields[name], strings.TrimPrefix(value, " "))
	}
	if len(fields) == 0 {
		return
	}
	if len(fields["data"]) != 1 || len(fields["id"]) != 1 || len(fields["event"]) != 1 {
		s.t.Errorf("%s: an event without one id, event and data line each: %q", s.call, msg)
		return
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(fields["data"][0]))
	if err != nil {
		s.t.Errorf("%s: data that is not JSON: %q", s.call, msg)
		return
	}
	if err := s.schema.Validate(v); err != nil {
		s.t.Errorf("%s: an event that is not as the OpenAPI document says: %s: %v", s.call, fields["data"][0], err)
		return
	}
	var ev struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	}
	json.Unmarshal([]byte(fields["data"][0]), &ev)
	if fields["id"][0] != fmt.Sprint(ev.ID) || fields["event"][0] != ev.Type {
		s.t.Errorf("%s: the id and event fields %q and %q are not the data's %d and %q", s.call, fields["id"][0], fields["event"][0], ev.ID, ev.Type)
	}
}
