package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// goClientVar, set in a re-run of the test binary, makes it a Go agent
// (see TestMain): it GETs the URL the variable holds and prints the
// response as the other runtimes' clients do.
const goClientVar = "AGENTVCR_TEST_GO_GET"

// goClientLoopbackVar makes the Go agent send loopback origins through
// HTTPS_PROXY too, as docs/proxy.md tells a Go agent to.
const goClientLoopbackVar = "AGENTVCR_TEST_GO_PROXY_LOOPBACK"

func TestMain(m *testing.M) {
	if u := os.Getenv(goClientVar); u != "" {
		os.Exit(goClient(u, os.Getenv(goClientLoopbackVar) != ""))
	}
	os.Exit(m.Run())
}

// goClient is a Go agent: net/http with the proxy from the environment,
// trusting the roots SSL_CERT_FILE names.
func goClient(u string, proxyLoopback bool) int {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if proxyLoopback {
		// docs/proxy.md's snippet: ProxyFromEnvironment never proxies
		// localhost or a loopback address.
		proxyURL, err := url.Parse(os.Getenv("HTTPS_PROXY"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		tr.Proxy = http.ProxyURL(proxyURL)
	}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Get(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("x-agentvcr: %s\n%s\n", resp.Header.Get(Header), body)
	return 0
}

// witness is an origin on loopback, over TLS and over plain HTTP, that
// knows whether the agent ever reached it around the proxy: it keeps the
// peer of every connection it accepts, and the proxy's upstream dialer
// keeps the local address of every connection the proxy opens. A peer the
// proxy did not open is an agent that went direct.
type witness struct {
	ca       *ca.Authority     // signs the TLS origin's certificate
	ports    map[string]string // scheme -> port, on 127.0.0.1
	upstream *http.Transport

	mu     sync.Mutex
	peers  []string            // remote address of each connection accepted
	dialed map[string]bool     // local address of each connection the proxy opened
	paths  map[string][]string // path -> peers of the requests for it
}

// aliasHost is a name for the witness that is not loopback by its
// spelling, for clients (Go's) that never proxy localhost or a loopback
// address: only the proxy's upstream dialer knows where it is.
const aliasHost = "agent-origin.test"

func newWitness(t *testing.T) *witness {
	t.Helper()
	authority, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &witness{ca: authority, ports: map[string]string{}, dialed: map[string]bool{}, paths: map[string][]string{}}
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.paths[r.URL.Path] = append(w.paths[r.URL.Path], r.RemoteAddr)
		w.mu.Unlock()
		fmt.Fprintf(rw, "hello %s", r.URL.Path)
	})
	for _, scheme := range []string{"https", "http"} {
		srv := httptest.NewUnstartedServer(handler)
		srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				w.mu.Lock()
				w.peers = append(w.peers, c.RemoteAddr().String())
				w.mu.Unlock()
			}
		}
		if scheme == "https" {
			// A leaf for each name the client sends, and for the address
			// when it sends none (httptest's own would be served then).
			srv.TLS = authority.TLSConfig("127.0.0.1")
			leaf, err := authority.Leaf("127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			srv.TLS.Certificates = []tls.Certificate{*leaf}
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		_, w.ports[scheme], _ = net.SplitHostPort(srv.Listener.Addr().String())
	}

	roots := x509.NewCertPool()
	roots.AddCert(authority.Cert)
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	w.upstream = &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, port, _ := net.SplitHostPort(addr); host == aliasHost {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				w.mu.Lock()
				w.dialed[c.LocalAddr().String()] = true
				w.mu.Unlock()
			}
			return c, err
		},
		ResponseHeaderTimeout: 5 * time.Second,
	}
	t.Cleanup(w.upstream.CloseIdleConnections)
	return w
}

// url is the witness's URL for scheme under host: localhost, 127.0.0.1
// or aliasHost.
func (w *witness) url(scheme, host string) string {
	return scheme + "://" + net.JoinHostPort(host, w.ports[scheme])
}

// origins are the witness's origins under each of its names.
func (w *witness) origins() []string {
	var origins []string
	for _, scheme := range []string{"https", "http"} {
		for _, host := range []string{"localhost", "127.0.0.1", aliasHost} {
			origins = append(origins, w.url(scheme, host))
		}
	}
	return origins
}

// direct returns the peers of the connections the proxy did not open.
func (w *witness) direct() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var direct []string
	for _, p := range w.peers {
		if !w.dialed[p] {
			direct = append(direct, p)
		}
	}
	return direct
}

// requests returns the peers of the requests the witness got for path.
func (w *witness) requests(path string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.paths[path])
}

// envProxy is a recording proxy in front of w, allowing w's origins, on
// loopback, and the environment Env hands out for it. The proxy's CA is
// the one that signs w's certificate, so the agent trusts the origin as it
// trusts a real service: one that goes around the proxy reaches it, and
// only w.direct tells.
func envProxy(t *testing.T, w *witness) (*Proxy, map[string]string) {
	t.Helper()
	authority := w.ca
	p := &Proxy{CA: authority, Allow: w.origins(), Mode: ModeRecord, Dir: t.TempDir(), Upstream: w.upstream}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); settle(t, p) })
	env, err := Env(srv.URL, authority, p.Allow)
	if err != nil {
		t.Fatal(err)
	}
	return p, env
}

// runClient runs an agent's command with the environment env and only
// PATH and HOME besides, and returns what it printed.
func runClient(t *testing.T, env map[string]string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed (.ci/run installs it): %v", name, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// Agents' clients, each printing "x-agentvcr: <header>" and the body.
const (
	nodeFetch = `fetch(process.argv[1]).then(async (r) => {
  console.log('x-agentvcr: ' + r.headers.get('x-agentvcr') + '\n' + await r.text());
}).catch((e) => { console.error(e); process.exit(1); });`
	// nodeGet: node:http or node:https by the URL's scheme, with the
	// default agent.
	nodeGet = `require(process.argv[1].startsWith('https:') ? 'node:https' : 'node:http').get(process.argv[1], (r) => {
  let body = '';
  r.on('data', (d) => { body += d; });
  r.on('end', () => console.log('x-agentvcr: ' + r.headers['x-agentvcr'] + '\n' + body));
}).on('error', (e) => { console.error(String(e)); process.exit(1); });`
	// nodeHTTPSOwnAgent: node:https with an Agent of its own, as a library
	// that keeps its connections alive makes one.
	nodeHTTPSOwnAgent = `const https = require('node:https');
https.get(process.argv[1], { agent: new https.Agent({ keepAlive: false }) }, (r) => {
  let body = '';
  r.on('data', (d) => { body += d; });
  r.on('end', () => console.log('x-agentvcr: ' + r.headers['x-agentvcr'] + '\n' + body));
}).on('error', (e) => { console.error(String(e)); process.exit(1); });`
	// nodeHTTPSHostHeader is nodeHTTPSOwnAgent with a Host header naming
	// [::1] (which NO_PROXY keeps), to see that the check goes by where
	// the connection went, not by what the request says.
	nodeHTTPSHostHeader = `const https = require('node:https');
const u = new URL(process.argv[1]);
https.get(u, { agent: new https.Agent({ keepAlive: false }), headers: { host: '[::1]:' + u.port } }, (r) => {
  let body = '';
  r.on('data', (d) => { body += d; });
  r.on('end', () => console.log('x-agentvcr: ' + r.headers['x-agentvcr'] + '\n' + body));
}).on('error', (e) => { console.error(String(e)); process.exit(1); });`
	pythonRequests = `import sys, requests
r = requests.get(sys.argv[1], timeout=10)
print("x-agentvcr: %s\n%s" % (r.headers.get("x-agentvcr"), r.text))`
)

// TestEnvRoutesEveryRuntime runs each runtime's client with exactly the
// environment Env hands out for a proxy that allows an origin on
// loopback, and shows the request reached the origin through the proxy
// and the agent never reached the origin itself.
func TestEnvRoutesEveryRuntime(t *testing.T) {
	w := newWitness(t)
	p, env := envProxy(t, w)
	if env["NO_PROXY"] != "" {
		t.Fatalf("NO_PROXY %q: want every loopback name left out", env["NO_PROXY"])
	}
	goEnv := func(loopback bool) map[string]string {
		e := map[string]string{goClientVar: "placeholder"}
		if loopback {
			e[goClientLoopbackVar] = "1"
		}
		for k, v := range env {
			e[k] = v
		}
		return e
	}
	node := func(url string) (string, []string) { return "node", []string{"-e", nodeFetch, url} }
	nodeHTTP := func(url string) (string, []string) { return "node", []string{"-e", nodeGet, url} }
	python := func(url string) (string, []string) { return "python3", []string{"-c", pythonRequests, url} }
	curl := func(url string) (string, []string) {
		return "curl", []string{"-sS", "--max-time", "10", "-D", "-", url}
	}
	goGet := func(url string) (string, []string) { return os.Args[0], nil }
	tests := []struct {
		name   string
		origin string
		env    map[string]string
		cmd    func(url string) (string, []string)
	}{
		{"node fetch, https localhost", w.url("https", "localhost"), env, node},
		{"node fetch, https 127.0.0.1", w.url("https", "127.0.0.1"), env, node},
		{"node fetch, http localhost", w.url("http", "localhost"), env, node},
		{"node:https, https localhost", w.url("https", "localhost"), env, nodeHTTP},
		{"node:https, https 127.0.0.1", w.url("https", "127.0.0.1"), env, nodeHTTP},
		{"node:http, http 127.0.0.1", w.url("http", "127.0.0.1"), env, nodeHTTP},
		{"python requests, https localhost", w.url("https", "localhost"), env, python},
		{"python requests, https 127.0.0.1", w.url("https", "127.0.0.1"), env, python},
		{"python requests, http 127.0.0.1", w.url("http", "127.0.0.1"), env, python},
		{"curl, https localhost", w.url("https", "localhost"), env, curl},
		{"curl, https 127.0.0.1", w.url("https", "127.0.0.1"), env, curl},
		{"curl, http localhost", w.url("http", "localhost"), env, curl},
		// Go's ProxyFromEnvironment never proxies localhost or a loopback
		// address: through the environment alone, a name that is not.
		{"go ProxyFromEnvironment, https " + aliasHost, w.url("https", aliasHost), goEnv(false), goGet},
		{"go ProxyFromEnvironment, http " + aliasHost, w.url("http", aliasHost), goEnv(false), goGet},
		{"go with the manual's loopback proxy, https localhost", w.url("https", "localhost"), goEnv(true), goGet},
		{"go with the manual's loopback proxy, https 127.0.0.1", w.url("https", "127.0.0.1"), goEnv(true), goGet},
	}
	t.Run("runtimes", func(t *testing.T) {
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				path := fmt.Sprintf("/hello/%d", i)
				name, args := tt.cmd(tt.origin + path)
				env := tt.env
				if _, ok := env[goClientVar]; ok {
					env = withVar(env, goClientVar, tt.origin+path)
				}
				stdout, stderr, err := runClient(t, env, name, args...)
				if err != nil {
					t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
				}
				if out := strings.ToLower(stdout); !strings.Contains(out, "x-agentvcr: recorded") || !strings.Contains(stdout, "hello "+path) {
					t.Fatalf("not answered through the proxy:\n%s\nstderr:\n%s", stdout, stderr)
				}
				if strings.Contains(stderr, "agentvcr") {
					t.Fatalf("the agent warned:\n%s", stderr)
				}
				if got := w.requests(path); len(got) != 1 {
					t.Fatalf("the origin got %d requests for %s; want 1", len(got), path)
				}
				if d := w.direct(); len(d) > 0 {
					t.Fatalf("the agent reached the origin around the proxy, from %v", d)
				}
			})
		}
	})
	settle(t, p) // every exchange over, so the counts are whole
	if s := p.Stats(); s.Recorded != len(tests) || s.Refused != 0 {
		t.Errorf("proxy stats %+v: want %d recorded, none refused", s, len(tests))
	}
}

// TestEnvLeavesNoLoopbackNameAround: with one loopback origin allowed
// under one name (http(s)://127.0.0.1:P), an agent that names it another
// way (localhost:P) reaches the proxy too, which refuses it, and never the
// origin itself: NO_PROXY holds no name for loopback.
func TestEnvLeavesNoLoopbackNameAround(t *testing.T) {
	w := newWitness(t)
	p := &Proxy{CA: w.ca, Allow: []string{w.url("https", "127.0.0.1"), w.url("http", "127.0.0.1")}, Mode: ModeRecord, Dir: t.TempDir(), Upstream: w.upstream}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); settle(t, p) })
	env, err := Env(srv.URL, w.ca, p.Allow)
	if err != nil {
		t.Fatal(err)
	}
	curl := func(url string) (string, []string) {
		return "curl", []string{"-sS", "--max-time", "10", "-D", "-", url}
	}
	node := func(url string) (string, []string) { return "node", []string{"-e", nodeFetch, url} }
	for i, tt := range []struct {
		name, origin string
		cmd          func(url string) (string, []string)
	}{
		{"curl, http localhost", w.url("http", "localhost"), curl},
		{"node fetch, http localhost", w.url("http", "localhost"), node},
		{"node fetch, https localhost", w.url("https", "localhost"), node},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := fmt.Sprintf("/around/%d", i)
			name, args := tt.cmd(tt.origin + path)
			stdout, stderr, err := runClient(t, env, name, args...)
			if err != nil || !strings.Contains(strings.ToLower(stdout), "x-agentvcr: refused") {
				t.Errorf("not refused by the proxy: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			if got := w.requests(path); len(got) != 0 {
				t.Errorf("the origin got %d requests for %s; want none", len(got), path)
			}
			if d := w.direct(); len(d) > 0 {
				t.Fatalf("the agent reached the origin around the proxy, from %v (NO_PROXY %q)", d, env["NO_PROXY"])
			}
		})
	}
}

// withVar returns a copy of m with name set to value.
func withVar(m map[string]string, name, value string) map[string]string {
	c := map[string]string{name: value}
	for k, v := range m {
		if k != name {
			c[k] = v
		}
	}
	return c
}

// TestWitnessSeesAnAgentGoDirect checks the check: with the NO_PROXY that
// Env handed out before allowed loopback origins were left out of it, curl
// goes around the proxy, and the witness says so.
func TestWitnessSeesAnAgentGoDirect(t *testing.T) {
	w := newWitness(t)
	_, env := envProxy(t, w)
	env = withVar(withVar(env, "NO_PROXY", "localhost,127.0.0.1,::1"), "no_proxy", "localhost,127.0.0.1,::1")
	stdout, stderr, err := runClient(t, env, "curl", "-sS", "--max-time", "10", "-D", "-", w.url("https", "127.0.0.1")+"/direct")
	if err != nil || strings.Contains(strings.ToLower(stdout), "x-agentvcr") || !strings.Contains(stdout, "hello /direct") {
		t.Fatalf("curl: %v\n%s\n%s", err, stdout, stderr)
	}
	if d := w.direct(); len(d) != 1 {
		t.Fatalf("direct connections %v; want curl's", d)
	}
}

// TestNodeWarnsWhenDirect: node:https with an Agent a library makes
// itself goes around HTTPS_PROXY (only the default agents are routed, by
// the preload on Node 20 and by Node 22.21+/24.5+ itself), and so does
// fetch once a program installs a dispatcher of its own; the preload Env
// hands out says so on stderr, once.
func TestNodeWarnsWhenDirect(t *testing.T) {
	if _, err := os.Stat(filepath.Join(nodeModules, "undici", "package.json")); err != nil {
		t.Fatalf("undici is not installed: npm ci --prefix proxy/testdata/node (.ci/run does): %v", err)
	}
	ownAgent, err := filepath.Abs("testdata/node/fetch-own-agent.cjs")
	if err != nil {
		t.Fatal(err)
	}
	w := newWitness(t)
	_, env := envProxy(t, w)
	url := w.url("https", "127.0.0.1")
	// NO_PROXY as a user may set it: ::1 exempt, 127.0.0.1 not.
	v6Exempt := withVar(withVar(env, "NO_PROXY", "::1"), "no_proxy", "::1")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"node:https with its own agent", env, []string{"-e", nodeHTTPSOwnAgent, url + "/https"}, "node:https connection to " + url + " went around the proxy"},
		{"fetch with its own dispatcher", env, []string{ownAgent, url + "/fetch"}, "fetch (undici) connection to " + url + " went around the proxy"},
		{"node:https with a Host header naming an exempt host", v6Exempt, []string{"-e", nodeHTTPSHostHeader, url + "/host"}, "node:https connection to " + url + " went around the proxy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := runClient(t, tt.env, "node", tt.args...)
			if !strings.Contains(stderr, "agentvcr: WARNING: "+tt.want) || strings.Count(stderr, "agentvcr:") != 1 {
				t.Fatalf("want one warning %q\nerr: %v\nstdout:\n%s\nstderr:\n%s", tt.want, err, stdout, stderr)
			}
			// It did reach the origin, unrecorded: what the warning is for.
			if err != nil || !strings.Contains(stdout, "x-agentvcr: undefined") && !strings.Contains(stdout, "x-agentvcr: null") {
				t.Fatalf("the agent: %v\n%s", err, stdout)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	a, err := ca.Load(filepath.Join(t.TempDir(), "config dir"))
	if err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(t.TempDir(), "system.pem")
	os.WriteFile(system, a.PEM(), 0o644)
	t.Setenv("SSL_CERT_FILE", system)
	preload := filepath.Join(filepath.Dir(a.CertPath), NodePreloadFile)
	tests := []struct {
		allow   []string
		noProxy string
	}{
		{nil, "localhost,127.0.0.1,::1"},
		{DefaultAllow(), "localhost,127.0.0.1,::1"},
		{[]string{"https://api.example.com"}, "localhost,127.0.0.1,::1"},
		{[]string{"https://localhost:48443"}, ""},
		{[]string{"http://127.0.0.1:3000"}, ""},
		{[]string{"https://[::1]:8443", "https://api.example.com"}, ""},
		{[]string{"https://LocalHost:1"}, ""},
		{[]string{"http://127.0.0.2:3000"}, ""},
	}
	for _, tt := range tests {
		env, err := Env("http://127.0.0.1:8899", a, tt.allow)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"HTTP_PROXY": "http://127.0.0.1:8899", "HTTPS_PROXY": "http://127.0.0.1:8899", "NO_PROXY": tt.noProxy,
			"http_proxy": "http://127.0.0.1:8899", "https_proxy": "http://127.0.0.1:8899", "no_proxy": tt.noProxy,
			"NODE_USE_ENV_PROXY": "1", "NODE_EXTRA_CA_CERTS": a.CertPath, "NODE_OPTIONS": `--require "` + preload + `"`,
			"SSL_CERT_FILE": env["SSL_CERT_FILE"], "REQUESTS_CA_BUNDLE": env["SSL_CERT_FILE"], "CURL_CA_BUNDLE": env["SSL_CERT_FILE"],
		}
		if fmt.Sprint(env) != fmt.Sprint(want) {
			t.Errorf("allow %v: env\n%v\nwant\n%v", tt.allow, env, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(a.CertPath), ca.BundleFile))
	if err != nil || !strings.Contains(string(b), strings.TrimSpace(string(a.PEM()))) {
		t.Fatalf("bundle: %v", err)
	}
	if b, err := os.ReadFile(preload); err != nil || string(b) != string(nodePreload) {
		t.Fatalf("preload: %v", err)
	}
	if got := nodeOptionQuote(`C:\a "b"`); got != `"C:\\a \"b\""` {
		t.Errorf("quoted %s", got)
	}
}

// TestNodeFetchHonoursNoProxy: a host NO_PROXY names (here the agent's
// own service on 127.0.0.1, while no loopback origin is allowed) is
// reached directly by the preload's dispatcher, without a warning.
func TestNodeFetchHonoursNoProxy(t *testing.T) {
	w := newWitness(t)
	p, _ := envProxy(t, w)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	env, err := Env(srv.URL, p.CA, []string{w.url("https", aliasHost)})
	if err != nil {
		t.Fatal(err)
	}
	if env["NO_PROXY"] != "localhost,127.0.0.1,::1" {
		t.Fatalf("NO_PROXY %q", env["NO_PROXY"])
	}
	stdout, stderr, err := runClient(t, env, "node", "-e", nodeFetch, w.url("http", "127.0.0.1")+"/own")
	if err != nil || stdout != "x-agentvcr: null\nhello /own\n" || stderr != "" {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if d := w.direct(); len(d) != 1 {
		t.Fatalf("direct connections %v; want the agent's one", d)
	}
}
