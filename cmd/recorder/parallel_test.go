package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// proxyProcess is `recorder proxy` running as a process of its own.
type proxyProcess struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	client *http.Client // an agent's, through the proxy, trusting its CA
	exited chan int
}

// startProxyProcess runs `bin proxy args...` with environ and returns
// once it printed its ready line. It may be called from any goroutine:
// it reports what went wrong as an error, and the test's cleanup kills
// the process.
func startProxyProcess(t *testing.T, bin string, environ []string, args ...string) (*proxyProcess, error) {
	cmd := exec.Command(bin, append([]string{"proxy", "--listen", "127.0.0.1:0", "--quiet"}, args...)...)
	cmd.Env = environ
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	pp := &proxyProcess{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan int, 1)}
	cmd.Stderr = pp.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		cmd.Wait()
		pp.exited <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		pp.exited <- receive(t, pp.exited, "the killed recorder proxy's exit")
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		return nil, fmt.Errorf("recorder proxy %v printed no ready line in 30 s", args)
	}
	var ready struct{ Proxy, CA string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		// No ready line: it ended. (This runs on a goroutine of its
		// own: it returns what went wrong, never fails the test.)
		var code int
		select {
		case code = <-pp.exited:
			pp.exited <- code
		case <-time.After(30 * time.Second):
			return nil, fmt.Errorf("recorder proxy %v: ready line %q: %v, and it did not exit within 30 s\n%s", args, line, err, pp.stderr)
		}
		return nil, fmt.Errorf("recorder proxy %v: ready line %q: %v (exit %d)\n%s", args, line, err, code, pp.stderr)
	}
	proxyURL, _ := url.Parse(ready.Proxy)
	caPEM, err := os.ReadFile(ready.CA)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	pp.client = &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(pp.client.CloseIdleConnections)
	return pp, nil
}

// stop sends SIGTERM and waits for the exit: 130, the proxy's code for
// an interrupted run that wrote what it recorded.
func (pp *proxyProcess) stop(t *testing.T) {
	t.Helper()
	pp.client.CloseIdleConnections()
	if err := pp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
		return
	}
	select {
	case code := <-pp.exited:
		pp.exited <- code // for the cleanup
		if code != 130 {
			t.Errorf("recorder proxy exited %d; want 130:\n%s", code, pp.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("recorder proxy did not stop within 30 s of SIGTERM:\n%s", pp.stderr)
	}
}

// get sends GET url through the proxy and returns the outcome and body.
func (pp *proxyProcess) get(url string) (string, string, error) {
	resp, err := pp.client.Get(url)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Header.Get("X-Agentvcr"), string(b), err
}

// TestParallelProxiesLoseNothing starts two, then eight, `recorder proxy`
// processes over one cassette directory, as a test runner's workers do,
// each recording requests of its own and one that all of them make, to a
// loopback TLS upstream. They are stopped with SIGTERM in several orders,
// some while others still record: every recording is in the cassette,
// the runs' used-files name them all (prune removes nothing), and two
// replaying processes over the directory replay every one.
func TestParallelProxiesLoseNothing(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "recorder")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/cmd/recorder").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/recorder: %v\n%s", err, out)
	}
	tests := []struct {
		procs int
		mode  string
		stop  string // "reverse": after every recording, last first; "each": each as it is done; "together": all at once
	}{
		{2, "record", "reverse"},
		{2, "auto", "each"},
		{8, "auto", "together"},
		{8, "record", "each"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s stopped %s", tt.procs, tt.mode, tt.stop), func(t *testing.T) {
			var hits atomic.Int64
			upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprintf(w, "%s #%d", r.URL.Path, hits.Add(1))
			}))
			defer upstream.Close()
			dir := t.TempDir()
			roots := filepath.Join(dir, "upstream.pem")
			os.WriteFile(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw}), 0o644)
			config := filepath.Join(dir, "proxy.yaml")
			os.WriteFile(config, []byte("allow: ["+upstream.URL+"]\nrules:\n  - name: web\n    url: "+upstream.URL+"/\n"), 0o600)
			cassettes := filepath.Join(dir, "cassettes")
			// One CA directory for all, made by whichever starts first;
			// the proxy trusts the upstream through SSL_CERT_FILE.
			environ := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "CI=", "SSL_CERT_FILE="+roots)

			procs := make([]*proxyProcess, tt.procs)
			errs := make([]error, tt.procs)
			var started sync.WaitGroup
			for i := range procs {
				started.Go(func() {
					procs[i], errs[i] = startProxyProcess(t, bin, environ, "--mode", tt.mode, "--config", config, "--dir", cassettes,
						"--used-file", filepath.Join(dir, fmt.Sprintf("used-%d.json", i)))
				})
			}
			started.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}

			const own = 5
			recorded := make([]map[string]string, tt.procs) // by process: path -> body
			var wg sync.WaitGroup
			for i, pp := range procs {
				recorded[i] = map[string]string{}
				wg.Go(func() {
					for j := range own + 1 {
						path := fmt.Sprintf("/p%d/r%d", i, j)
						if j == own {
							path = "/same"
						}
						outcome, body, err := pp.get(upstream.URL + path)
						if err != nil || outcome != "recorded" {
							t.Errorf("process %d, %s: %s %q %v", i, path, outcome, body, err)
							return
						}
						recorded[i][path] = body
					}
					if tt.stop == "each" {
						pp.stop(t)
					}
				})
			}
			wg.Wait()
			switch tt.stop {
			case "reverse":
				for i := len(procs) - 1; i >= 0; i-- {
					procs[i].stop(t)
				}
			case "together":
				for _, pp := range procs {
					wg.Go(func() { pp.stop(t) })
				}
				wg.Wait()
			}
			if t.Failed() {
				t.FailNow()
			}

			c, err := cassette.Load(filepath.Join(cassettes, "web.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			inCassette := map[string]bool{}
			ids := map[int]bool{}
			for _, in := range c.Interactions {
				if ids[in.ID] {
					t.Errorf("id %d is in the cassette twice", in.ID)
				}
				ids[in.ID], inCassette[in.Response.Body] = true, true
			}
			want := 0
			for i := range procs {
				for path, body := range recorded[i] {
					want++
					if !inCassette[body] {
						t.Errorf("process %d recorded %s (%q); the cassette lost it", i, path, body)
					}
				}
			}
			if len(c.Interactions) != want {
				t.Errorf("the cassette holds %d recordings; %d were made", len(c.Interactions), want)
			}
			usedFiles, _ := filepath.Glob(filepath.Join(dir, "used-*.json"))
			if r := recorder(t, "", append([]string{"prune", "--dry-run", cassettes}, usedFiles...)...); r.code != 0 || r.stdout != "" {
				t.Errorf("prune --dry-run with every run's used-file: %+v; want nothing to remove", r)
			}

			// Replay, in two processes at once over the directory:
			// every recording, nothing live.
			before := hits.Load()
			var replayers []*proxyProcess
			for range 2 {
				rp, err := startProxyProcess(t, bin, environ, "--mode", "replay", "--config", config, "--dir", cassettes)
				if err != nil {
					t.Fatal(err)
				}
				replayers = append(replayers, rp)
			}
			var sames []string
			for i := range procs {
				sames = append(sames, recorded[i]["/same"])
			}
			for r, rp := range replayers {
				wg.Go(func() {
					for i := range procs {
						for j := range own {
							path := fmt.Sprintf("/p%d/r%d", i, j)
							if outcome, body, err := rp.get(upstream.URL + path); err != nil || outcome != "replayed" || body != recorded[i][path] {
								t.Errorf("replayer %d, %s: %s %q %v; want %q replayed", r, path, outcome, body, err, recorded[i][path])
							}
						}
					}
					if outcome, body, err := rp.get(upstream.URL + "/same"); err != nil || outcome != "replayed" || !slices.Contains(sames, body) {
						t.Errorf("replayer %d, /same: %s %q %v; want one of %q", r, outcome, body, err, sames)
					}
				})
			}
			wg.Wait()
			for _, rp := range replayers {
				rp.stop(t)
			}
			if hits.Load() != before {
				t.Errorf("the replay went live %d times", hits.Load()-before)
			}
			if t.Failed() {
				t.Logf("the cassette's recordings:\n%s", strings.Join(slices.Sorted(maps.Keys(inCassette)), "\n"))
			}
		})
	}
}
