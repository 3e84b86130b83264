package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
)

// stderrLines is a command's stderr, line by line as it is written.
type stderrLines struct {
	mu    sync.Mutex
	all   strings.Builder
	lines chan string
}

func newStderrLines() *stderrLines { return &stderrLines{lines: make(chan string, 1000)} }

func (s *stderrLines) Write(b []byte) (int, error) {
	s.mu.Lock()
	s.all.Write(b)
	s.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		select {
		case s.lines <- l:
		default: // the test reads only the lines it waits for
		}
	}
	return len(b), nil
}

func (s *stderrLines) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.String()
}

// waitFor returns the first line that holds want, or fails after 10 s.
func (s *stderrLines) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-s.lines:
			if strings.Contains(l, want) {
				return l
			}
		case <-deadline:
			t.Fatalf("no stderr line with %q in:\n%s", want, s.String())
			return ""
		}
	}
}

// runningProxy is `recorder proxy` running in the test.
type runningProxy struct {
	proxy, control, token string
	env                   map[string]string // the ready line's env
	warnings              []string
	stop                  context.CancelFunc
	done                  chan int
}

// startProxy runs `recorder proxy args...` with its stderr going to
// stderr and returns once it printed its ready line.
func startProxy(t *testing.T, stderr io.Writer, args ...string) *runningProxy {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CI", "")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	rp := &runningProxy{stop: cancel, done: make(chan int, 1)}
	go func() {
		rp.done <- run(ctx, append([]string{"proxy", "--listen", "127.0.0.1:0"}, args...), strings.NewReader(""), pw, stderr)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		receive(t, rp.done, "the stopped proxy's exit")
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no ready line: %v", err)
	}
	go io.Copy(io.Discard, pr)
	var ready struct {
		Proxy, Control, Token string
		Env                   map[string]string
		Warnings              []string
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.Warnings == nil {
		t.Fatalf("ready line %q: %v (warnings must be a list)", line, err)
	}
	rp.proxy, rp.control, rp.token, rp.env, rp.warnings = ready.Proxy, ready.Control, ready.Token, ready.Env, ready.Warnings
	return rp
}

func (rp *runningProxy) call(t *testing.T, path, body string) {
	t.Helper()
	req, _ := http.NewRequest("POST", rp.control+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+rp.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %v %v", path, err, resp)
	}
	resp.Body.Close()
}

func (rp *runningProxy) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-rp.done:
		rp.done <- code // for the cleanup
		return code
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not stop")
		return 0
	}
}

func TestInterruptedProxyFinishesWhatIsInFlight(t *testing.T) {
	// Ctrl-C while a response streams: the proxy takes nothing new, lets
	// the response end, ends the open scope as failed (nothing written),
	// says so, and exits 130.
	arrived, release := make(chan struct{}), make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-release
		fmt.Fprint(w, "data: two\n\n")
	}))
	defer upstream.Close()
	dir := t.TempDir()
	config := filepath.Join(dir, "proxy.yaml")
	os.WriteFile(config, []byte("allow: ["+upstream.URL+"]\nrules:\n  - name: local\n    url: "+upstream.URL+"/\n"), 0o600)
	stderr := newStderrLines()
	rp := startProxy(t, stderr, "--config", config, "--dir", filepath.Join(dir, "cassettes"), "--log-format", "json")
	rp.call(t, "/v1/scopes", `{"name":"t1"}`)

	proxyURL, _ := url.Parse(rp.proxy)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	defer client.CloseIdleConnections()
	body := make(chan string, 1)
	go func() {
		resp, err := client.Get(upstream.URL + "/stream")
		if err != nil {
			body <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body <- string(b)
	}()
	receive(t, arrived, "the upstream's first event")
	rp.stop()
	stderr.waitFor(t, "stopping: no new requests")
	select {
	case code := <-rp.done:
		t.Fatalf("exit %d before the exchange in flight ended:\n%s", code, stderr)
	default:
	}
	close(release)
	if got := receive(t, body, "the agent's whole response"); got != "data: one\n\ndata: two\n\n" {
		t.Fatalf("the agent got %q; want the whole response", got)
	}
	if code := rp.exit(t); code != 130 {
		t.Fatalf("exit %d; want 130:\n%s", code, stderr)
	}
	// With --log-format json every line is a JSON object, to the last.
	said := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("stderr line %q is not JSON:\n%s", line, stderr)
		}
		said[rec["msg"].(string)] = rec
	}
	if r := said["scope ended as failed: its recordings are not written"]; r == nil || r["scope"] != "t1" || r["dropped"] != 1.0 || r["level"] != "WARN" {
		t.Errorf("the failed scope: %v\n%s", r, stderr)
	}
	if r := said["stopped: interrupted"]; r == nil || r["recorded"] != 0.0 {
		t.Errorf("the counts: %v\n%s", r, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "local.yaml")); !os.IsNotExist(err) {
		t.Fatalf("the failed scope's cassette was written: %v", err)
	}
}

func TestProxyLogFlags(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	defer upstream.Close()
	dir := t.TempDir()
	get := func(rp *runningProxy) {
		t.Helper()
		proxyURL, _ := url.Parse(rp.proxy)
		client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(upstream.URL + "/x")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	// Replay with no recordings warns at once; each exchange is a line.
	stderr := newStderrLines()
	rp := startProxy(t, stderr, "--mode", "replay", "--allow", upstream.URL, "--dir", dir, "--log-format", "json")
	line := stderr.waitFor(t, "replay with no recordings")
	var rec map[string]any
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["level"] != "WARN" || rec["dir"] != dir {
		t.Fatalf("warning %q (%v)", line, err)
	}
	get(rp)
	line = stderr.waitFor(t, `"msg":"exchange"`)
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["status"] != 412.0 || rec["outcome"] != "missed" || rec["url"] != upstream.URL+"/x" {
		t.Fatalf("exchange line %q (%v)", line, err)
	}
	rp.stop()
	rp.exit(t)

	// --quiet: warnings only.
	stderr = newStderrLines()
	rp = startProxy(t, stderr, "--mode", "replay", "--allow", upstream.URL, "--dir", dir, "--quiet")
	get(rp)
	// The exchanges' lines are written in batches; a warning is written
	// before the response it is about, so that a proxy killed the
	// moment after has said it.
	if out := stderr.String(); !strings.Contains(out, "missed: no recording matches") {
		t.Fatalf("the 412 came before its warning was written; stderr so far:\n%s", out)
	}
	rp.stop()
	rp.exit(t)
	if out := stderr.String(); strings.Contains(out, "msg=exchange") {
		t.Fatalf("--quiet logged an exchange:\n%s", out)
	}

	if r := recorder(t, "", "proxy", "--log-format", "yaml"); r.code != 2 || !strings.Contains(r.stderr, "--log-format") {
		t.Fatalf("--log-format yaml: %+v", r)
	}
}

// openTerminal opens a pseudo-terminal: what a person's shell gives a
// command, to which the command writes through tty.
func openTerminal(t *testing.T) (tty, screen *os.File) {
	t.Helper()
	screen, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("a terminal: %v", err)
	}
	t.Cleanup(func() { screen.Close() })
	fd := int(screen.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("the terminal's number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty, screen
}

func TestProxyBannerOnATerminal(t *testing.T) {
	tty, screen := openTerminal(t)
	seen := newStderrLines()
	go io.Copy(seen, screen)
	rp := startProxy(t, tty, "--allow", "https://api.example.com")
	seen.waitFor(t, "mode auto, cassettes in recordings/cassettes")
	seen.waitFor(t, "https://api.example.com")
	line := seen.waitFor(t, "next, in the agent's shell")
	if !strings.Contains(line, `eval "$(recorder env --proxy `+rp.proxy+`)"`) {
		t.Fatalf("next step %q", line)
	}
	rp.stop()
	rp.exit(t)

	// An allowed origin on loopback: the next step passes it to recorder
	// env, which then prints the start line's env, and what that cannot do
	// is said.
	rp = startProxy(t, tty, "--allow", "https://localhost:48443")
	seen.waitFor(t, "warning: Go's net/http never sends localhost")
	line = seen.waitFor(t, "next, in the agent's shell")
	next := `recorder env --proxy ` + rp.proxy + ` --allow https://localhost:48443`
	if !strings.Contains(line, `eval "$(`+next+`)"`) {
		t.Fatalf("next step with a loopback origin %q", line)
	}
	r := recorder(t, "", strings.Fields(next)[1:]...)
	if got := evalExports(t, r.stdout, ""); r.code != 0 || fmt.Sprint(got) != fmt.Sprint(rp.env) {
		t.Fatalf("%s: %+v\nevaluated %v\nthe start line's env %v", next, r, got, rp.env)
	}
	if rp.env["NO_PROXY"] != "" || len(rp.warnings) != 2 {
		t.Fatalf("start line: env %v, warnings %q", rp.env, rp.warnings)
	}

	// Not a terminal: the ready line only.
	var out strings.Builder
	var mu sync.Mutex
	rp = startProxy(t, writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(b) }))
	rp.stop()
	rp.exit(t)
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(out.String(), "next, in the agent's shell") {
		t.Fatalf("banner off a terminal:\n%s", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestLoadShowsProgressOnATerminal(t *testing.T) {
	conv := juniortest.Long(2500)
	file := filepath.Join(t.TempDir(), "long.json")
	var buf bytes.Buffer
	if err := history.Write(&buf, &history.Recording{Header: history.Header{Version: 1, Surface: conv.Surface, Identities: conv.Identities}, Events: conv.Events}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, buf.Bytes(), 0o600)
	dbURL, _ := juniortest.Database(t)
	tty, screen := openTerminal(t)
	seen := newStderrLines()
	go io.Copy(seen, screen)
	var out strings.Builder
	if code := run(context.Background(), []string{"load", "--database-url", dbURL, "--conversation-id", "local:web:long", file}, strings.NewReader(""), &out, tty); code != 0 {
		t.Fatalf("load: exit %d", code)
	}
	seen.waitFor(t, "loading "+file+": 2000 rows")
	if out.String() != "local:web:long\n" {
		t.Fatalf("stdout %q", out.String())
	}
}
