package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

func TestProxyCommandRecordsAndStops(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CI", "")
	other, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	system := filepath.Join(t.TempDir(), "roots.pem")
	os.WriteFile(system, other.PEM(), 0o644)
	t.Setenv("SSL_CERT_FILE", system)

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer upstream.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "proxy.yaml")
	os.WriteFile(config, []byte("allow: ["+upstream.URL+"]\nrules:\n  - name: local\n    url: "+upstream.URL+"/\n"), 0o600)

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--config", config, "--dir", filepath.Join(dir, "cassettes"),
			"--used-file", filepath.Join(dir, "used.json")},
			strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v (%s)", err, stderr.String())
	}
	var ready struct {
		Proxy, Control, Token, CA string
		Env                       map[string]string
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("ready line %q: %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	if ready.Env["HTTPS_PROXY"] != ready.Proxy || ready.Env["NODE_EXTRA_CA_CERTS"] != ready.CA || len(ready.Token) < 32 {
		t.Fatalf("ready %+v", ready)
	}
	proxyURL, _ := url.Parse(ready.Proxy)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	resp, err := client.Get(upstream.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections()
	if string(body) != "hello" || resp.Header.Get("X-Agentvcr") != "recorded" {
		t.Fatalf("through the proxy: %q %s", body, resp.Header.Get("X-Agentvcr"))
	}
	req, _ := http.NewRequest("GET", ready.Control+"/v1/stats", nil)
	req.Header.Set("Authorization", "Bearer "+ready.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("control API: %v", err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 130 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not stop")
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "local.yaml")); err != nil {
		t.Fatalf("no cassette: %v", err)
	}
	used, _ := os.ReadFile(filepath.Join(dir, "used.json"))
	if strings.TrimSpace(string(used)) != `{"local":[0]}` {
		t.Fatalf("used-file %q", used)
	}

	// A run that used nothing of "local": prune empties and deletes it.
	os.WriteFile(filepath.Join(dir, "none.json"), []byte(`{"local":[]}`), 0o644)
	r := recorder(t, "", "prune", "--dry-run", filepath.Join(dir, "cassettes"), filepath.Join(dir, "none.json"))
	if r.code != 0 || !strings.Contains(r.stdout, "local: would remove 1") {
		t.Fatalf("prune --dry-run: %+v", r)
	}
	if r := recorder(t, "", "prune", filepath.Join(dir, "cassettes"), filepath.Join(dir, "used.json")); r.code != 0 || r.stdout != "" {
		t.Fatalf("prune keeping what was used: %+v", r)
	}
	if r := recorder(t, "", "prune", filepath.Join(dir, "cassettes"), filepath.Join(dir, "none.json")); r.code != 0 {
		t.Fatalf("prune: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "local.yaml")); !os.IsNotExist(err) {
		t.Fatal("an emptied cassette was kept")
	}
}

// The deadline flags reach the proxy: a connection that sends nothing,
// plain or after its CONNECT, and one idle after a request, are closed.
func TestProxyCommandDeadlines(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CI", "")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer upstream.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--allow", upstream.URL, "--mode", "passthrough", "--dir", t.TempDir(),
			"--header-timeout", "300ms", "--handshake-timeout", "300ms", "--idle-timeout", "300ms"},
			strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v (%s)", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	var ready struct{ Proxy, Control string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(ready.Proxy, "http://")
	host := strings.TrimPrefix(upstream.URL, "http://")
	for _, c := range []struct{ addr, first string }{
		{addr, ""},
		{addr, "CONNECT " + host + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n"},
		{addr, "GET " + upstream.URL + "/ HTTP/1.1\r\nHost: " + host + "\r\n\r\n"},
		// The control port drops a client that stalls in its header too.
		{strings.TrimPrefix(ready.Control, "http://"), "GET /v1/stats HTTP/1.1\r\nHost: x\r\n"},
	} {
		first := c.first
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(conn, first)
		start := time.Now()
		got, err := io.ReadAll(conn) // until the proxy closes the connection
		if err != nil {
			t.Fatalf("after %q: %v; want the proxy to close the connection", first, err)
		}
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("after %q the proxy closed the connection in %s, before its deadline (%q)", first, d, got)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not stop")
	}
}

func TestProxyCommandBadInput(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("rulez: []\n"), 0o600)
	notUsed := filepath.Join(t.TempDir(), "x.json")
	os.WriteFile(notUsed, []byte("[1,2]"), 0o644)
	for _, args := range [][]string{
		{"prune", t.TempDir(), notUsed},
		{"prune", t.TempDir()},
		{"prune", t.TempDir(), filepath.Join(t.TempDir(), "missing.json")},
		{"proxy", "--mode", "sideways"},
		{"proxy", "--timing", "slow"},
		{"proxy", "--config", bad},
		{"proxy", "--allow", "localhost:48443"},
		{"proxy", "--allow", "ftp://x"},
		{"proxy", "--listen", "0.0.0.0:0"},
		{"proxy", "--listen", "nonsense"},
		{"proxy", "--idle-timeout", "-1s"},
	} {
		if r := recorder(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d (%s); want 2", args, r.code, r.stderr)
		}
	}
}

func TestEnvCommand(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	other, _ := ca.Load(t.TempDir())
	system := filepath.Join(t.TempDir(), "roots.pem")
	os.WriteFile(system, other.PEM(), 0o644)
	t.Setenv("SSL_CERT_FILE", system)
	r := recorder(t, "", "env", "--proxy", "http://127.0.0.1:9000")
	env := evalExports(t, r.stdout, "--max-old-space-size=100")
	preload := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agentvcr", proxy.NodePreloadFile)
	if r.code != 0 || env["HTTPS_PROXY"] != "http://127.0.0.1:9000" || env["https_proxy"] != "http://127.0.0.1:9000" || env["NODE_USE_ENV_PROXY"] != "1" ||
		env["NO_PROXY"] != "localhost,127.0.0.1,::1" || env["NODE_OPTIONS"] != `--require "`+preload+`" --max-old-space-size=100` ||
		strings.Contains(r.stdout, "warning") {
		t.Fatalf("env: %+v\nevaluated: %v", r, env)
	}
	r = recorder(t, "", "env", "--allow", "https://127.0.0.1:48443", "--allow", "https://api.example.com")
	if env := evalExports(t, r.stdout, ""); r.code != 0 || env["NO_PROXY"] != "" || env["no_proxy"] != "" ||
		!strings.Contains(r.stdout, "# warning: Go's net/http never sends localhost or a loopback address through a proxy") {
		t.Fatalf("env --allow: %+v", r)
	}
	if r := recorder(t, "", "env", "--allow", "https://localhost/path"); r.code != 2 {
		t.Fatalf("env --allow with a path: %+v", r)
	}
}

// evalExports evaluates recorder env's output in sh, with NODE_OPTIONS set
// to nodeOptions before, and returns the variables it set.
func evalExports(t *testing.T, exports, nodeOptions string) map[string]string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", "-c", `eval "$EXPORTS" && unset EXPORTS && env -0`)
	cmd.Env = []string{"EXPORTS=" + exports}
	if nodeOptions != "" {
		cmd.Env = append(cmd.Env, "NODE_OPTIONS="+nodeOptions)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, exports)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "PWD" && k != "SHLVL" && k != "_" {
			env[k] = v
		}
	}
	return env
}

func TestProxyFakeModelAndMockSlack(t *testing.T) {
	stderr := newStderrLines()
	rp := startProxy(t, stderr, "--fake-model", "--mock-slack", "--dir", t.TempDir())
	rp.call(t, "/v1/fakeai/respond", `{"agent":{"name":"titler","purpose":"text"},"responses":[{"text":"Deploy status"}]}`)

	ca, err := os.ReadFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agentvcr", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	proxyURL, _ := url.Parse(rp.proxy)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer client.CloseIdleConnections()
	resp, err := client.Post("https://api.openai.com/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"gpt-fake","messages":[{"role":"user","content":"Title this thread"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct{ Message struct{ Content string } }
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.Header.Get("X-Agentvcr") != "faked" || len(got.Choices) != 1 || got.Choices[0].Message.Content != "Deploy status" {
		t.Fatalf("through the proxy: %s %+v", resp.Header.Get("X-Agentvcr"), got)
	}
	if r := recorder(t, "", "proxy", "--mode", "fake"); r.code != 2 || !strings.Contains(r.stderr, "--fake-model") {
		t.Fatalf("--mode fake: %+v", r)
	}

	// Slack is answered by the mock, never the real slack.com.
	rp.call(t, "/v1/slack/seed", `{"channels":[{"id":"C0EVAL0001","name":"eval"}]}`)
	post, _ := http.NewRequest("POST", "https://slack.com/api/chat.postMessage",
		strings.NewReader(`{"channel":"C0EVAL0001","text":"hello from the test"}`))
	post.Header.Set("Content-Type", "application/json")
	post.Header.Set("Authorization", "Bearer xoxb-test-token")
	resp, err = client.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	var posted struct {
		OK bool
		TS string
	}
	json.NewDecoder(resp.Body).Decode(&posted)
	resp.Body.Close()
	if resp.Header.Get("X-Agentvcr") != "mocked" || !posted.OK || posted.TS == "" {
		t.Fatalf("chat.postMessage through the proxy: %s %+v", resp.Header.Get("X-Agentvcr"), posted)
	}
	req, _ := http.NewRequest("GET", rp.control+"/v1/slack/channels/C0EVAL0001/messages", nil)
	req.Header.Set("Authorization", "Bearer "+rp.token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(msgs), "hello from the test") {
		t.Fatalf("the mock's channel: %s", msgs)
	}
	cfg := filepath.Join(t.TempDir(), "proxy.yaml")
	os.WriteFile(cfg, []byte("allow: [https://api.example.com]\nrules:\n  - name: api\n    url: https://api.example.com/\n"), 0o644)
	if r := recorder(t, "", "proxy", "--mock-slack", "--config", cfg); r.code != 2 || !strings.Contains(r.stderr, "no rule is named slack") {
		t.Fatalf("--mock-slack without a slack rule: %+v", r)
	}
}

// --upstream-ca trusts a private CA for upstream TLS: a loopback upstream
// whose certificate that CA signed is refused without the flag, and the
// warning that says why is logged even with --quiet; with it, it is
// served.
func TestProxyUpstreamCA(t *testing.T) {
	private, err := ca.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := private.Leaf("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("private hello")) }))
	upstream.TLS = &tls.Config{Certificates: []tls.Certificate{*leaf}}
	upstream.StartTLS()
	defer upstream.Close()
	caFile := filepath.Join(t.TempDir(), "private-ca.pem")
	os.WriteFile(caFile, private.PEM(), 0o644)

	get := func(args ...string) (int, string, string) {
		t.Helper()
		stderr := newStderrLines()
		rp := startProxy(t, stderr, append([]string{"--mode", "passthrough", "--allow", upstream.URL, "--quiet", "--dir", t.TempDir()}, args...)...)
		pem, err := os.ReadFile(filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "agentvcr", "ca.pem"))
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		proxyURL, _ := url.Parse(rp.proxy)
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(upstream.URL + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		line := ""
		if resp.StatusCode != http.StatusOK {
			line = stderr.waitFor(t, "level=WARN")
		}
		return resp.StatusCode, string(b), line
	}
	code, body, warning := get()
	if code != http.StatusBadGateway || !strings.Contains(body, "certificate") {
		t.Fatalf("without --upstream-ca: %d %q; want 502 naming the certificate", code, body)
	}
	if !strings.Contains(warning, "certificate signed by unknown authority") || !strings.Contains(warning, "--upstream-ca") {
		t.Fatalf("with --quiet, the warning %q does not say why, nor what to do", warning)
	}
	if code, body, _ := get("--upstream-ca", caFile); code != http.StatusOK || body != "private hello" {
		t.Fatalf("with --upstream-ca: %d %q", code, body)
	}

	notPEM := filepath.Join(t.TempDir(), "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	for _, file := range []string{notPEM, filepath.Join(t.TempDir(), "missing.pem")} {
		if r := recorder(t, "", "proxy", "--upstream-ca", file); r.code != 2 || !strings.Contains(r.stderr, file) {
			t.Errorf("--upstream-ca %s: %+v; want exit 2 naming the file", file, r)
		}
	}
}

// --mode lists only the modes it takes, and an unknown one is refused
// with that list.
func TestProxyModeFlagListsWhatItTakes(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	help := recorder(t, "", "proxy", "--help")
	var modeLine string
	for _, l := range strings.Split(help.stdout+help.stderr, "\n") {
		if strings.Contains(l, "--mode string") {
			modeLine = l
		}
	}
	if !strings.Contains(modeLine, "auto, replay, record, passthrough or mock") || strings.Contains(modeLine, "fake") {
		t.Fatalf("--mode's help: %q", modeLine)
	}
	r := recorder(t, "", "proxy", "--mode", "sideways")
	if r.code != 2 || !strings.Contains(r.stderr, "use auto, replay, record, passthrough or mock") || strings.Contains(r.stderr, "fake") {
		t.Fatalf("--mode sideways: %+v", r)
	}
}
