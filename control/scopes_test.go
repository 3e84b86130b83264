package control

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// control is a client of a proxy's control API, as a test in another
// language would use it. Every answer it gets is checked against the
// control API's OpenAPI document.
type control struct {
	t       *testing.T
	url     string
	token   string
	client  *http.Client
	checked *checkedTransport
}

// newControl serves the control API of p and its mocks with token for
// the test's length.
func newControl(t *testing.T, p *proxy.Proxy, token string) *control {
	srv := httptest.NewServer(handler(p, token))
	t.Cleanup(srv.Close)
	ct := newCheckedTransport(t)
	c := &control{t: t, url: srv.URL, token: token, client: &http.Client{Transport: ct}, checked: ct}
	t.Cleanup(c.client.CloseIdleConnections)
	return c
}

// open sends a call with token (none when empty) and returns the response
// unread.
func (c *control) open(token, method, path, body string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// as sends a call with token and returns its status and body.
func (c *control) as(token, method, path, body string) (int, string) {
	c.t.Helper()
	resp := c.open(token, method, path, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// do sends a call with the right token.
func (c *control) do(method, path, body string) (int, string) {
	c.t.Helper()
	return c.as(c.token, method, path, body)
}

func TestScopes(t *testing.T) {
	dir := t.TempDir()
	up := echo(t)
	p, hc := front(t, up, proxy.ModeAuto, dir, proxy.Rule{Name: "model", URLPrefix: up.URL + "/v1/"})
	ctl := newControl(t, p, "secret-token")
	call := func(method, path, body, token string) (int, string) { return ctl.as(token, method, path, body) }
	if code, _ := call("GET", "/v1/stats", "", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := call("POST", "/v1/scopes", `{}`, "secret-token"); code != http.StatusBadRequest {
		t.Fatalf("no name: %d", code)
	}
	if code, _ := call("POST", "/v1/scopes", `{"name":"fails"}`, "secret-token"); code != http.StatusNoContent {
		t.Fatalf("begin: %d", code)
	}
	post(t, hc, up.URL+"/v1/messages", `{"prompt":"failing test"}`)
	code, body := call("POST", "/v1/scopes/fails/end", `{"passed":false}`, "secret-token")
	if code != http.StatusOK || !strings.Contains(body, `"recorded":0`) {
		t.Fatalf("end failed: %d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.yaml")); !os.IsNotExist(err) {
		t.Fatal("a failed scope wrote its recording")
	}
	call("POST", "/v1/scopes", `{"name":"passes"}`, "secret-token")
	resp, _ := post(t, hc, up.URL+"/v1/messages", `{"prompt":"passing test"}`)
	if resp.Header.Get(proxy.Header) != "recorded" {
		t.Fatalf("in a scope: %s", resp.Header.Get(proxy.Header))
	}
	resp, _ = post(t, hc, up.URL+"/v1/messages", `{"prompt":"passing test"}`)
	if resp.Header.Get(proxy.Header) != "replayed" {
		t.Fatalf("a scope's recording must replay within it: %s", resp.Header.Get(proxy.Header))
	}
	if code, _ := call("POST", "/v1/scopes/other/end", `{"passed":true}`, "secret-token"); code != http.StatusConflict {
		t.Fatalf("ending another scope: %d", code)
	}
	code, body = call("POST", "/v1/scopes/passes/end", `{"passed":true}`, "secret-token")
	if code != http.StatusOK || !strings.Contains(body, `"recorded":1`) {
		t.Fatalf("end passed: %d %s", code, body)
	}
	c, err := cassette.Load(filepath.Join(dir, "model.yaml"))
	if err != nil || len(c.Interactions) != 1 || !strings.Contains(c.Interactions[0].Request.Body, "passing") {
		t.Fatalf("cassette after a passed scope: %v %+v", err, c)
	}
	if code, body := call("GET", "/v1/stats", "", "secret-token"); code != http.StatusOK || !strings.Contains(body, `"recorded":1`) {
		t.Fatalf("stats: %d %s", code, body)
	}
}

func TestControlErrorsAreJSON(t *testing.T) {
	up := echo(t)
	p, _ := front(t, up, proxy.ModeAuto, t.TempDir(), proxy.Rule{Name: "model", URLPrefix: up.URL + "/v1/"})
	ctl := newControl(t, p, "secret-token")
	for _, tt := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/v1/nope", http.StatusNotFound},
		{"DELETE", "/v1/stats", http.StatusMethodNotAllowed},
		{"GET", "/v1/scopes", http.StatusMethodNotAllowed},
	} {
		code, body := ctl.do(tt.method, tt.path, "")
		var e struct{ Error string }
		if code != tt.code || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, tt.path) {
			t.Errorf("%s %s: %d %q; want %d and {\"error\": ...} naming the path", tt.method, tt.path, code, body, tt.code)
		}
	}
}

// A body larger than the control API reads is refused before it is
// read, and a scope name is bounded, so no client makes the proxy hold
// or repeat megabytes.
func TestBodiesAndNamesAreBounded(t *testing.T) {
	up := echo(t)
	p, _ := front(t, up, proxy.ModeAuto, t.TempDir(), proxy.Rule{Name: "model", URLPrefix: up.URL + "/v1/"})
	ctl := newControl(t, p, "secret-token")
	big := `{"name":"` + strings.Repeat("a", MaxBody) + `"}`
	if code, body := ctl.do("POST", "/v1/scopes", big); code != http.StatusRequestEntityTooLarge || len(body) > 1000 {
		t.Fatalf("a body over MaxBody: %d, %d bytes of answer", code, len(body))
	}
	long := `{"name":"` + strings.Repeat("a", MaxScopeName+1) + `"}`
	if code, body := ctl.do("POST", "/v1/scopes", long); code != http.StatusBadRequest || strings.Contains(body, strings.Repeat("a", 100)) {
		t.Fatalf("a name over MaxScopeName: %d %.200s", code, body)
	}
	if code, _ := ctl.do("POST", "/v1/scopes", `{"name":"`+strings.Repeat("a", MaxScopeName)+`"}`); code != http.StatusNoContent {
		t.Fatalf("a name of MaxScopeName bytes: %d", code)
	}
}
