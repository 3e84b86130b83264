package bench

import (
	"bufio"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// BenchmarkParallelRecording measures what sharing a cassette directory
// costs recording proxies: the recorder binary records 2,000 distinct
// model requests, four at a time, as one process, as four processes on
// one directory (each merging into the same cassette under its lock), and
// as four processes on four directories (the same work with no lock to
// share). The time runs from the first request to the exit of the last
// process, which writes what it recorded on SIGTERM, so that every
// recording is on disk when it stops. The same requests in passthrough,
// through one process and through four, say what four processes cost
// with nothing written at all.
//
// It reports requests per second for each, and the ratios: four
// recording processes on one directory to one (the figure to quote,
// beside the passthrough ratio, which bounds it on a machine with fewer
// cores than processes), and to four on four directories (what the lock
// and the shared file cost; target >= 0.8).
func BenchmarkParallelRecording(b *testing.B) {
	bin := buildRecorder(b)
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d}}`, len(body))
	}))
	defer upstream.Close()
	dir := b.TempDir()
	roots := filepath.Join(dir, "upstream.pem")
	os.WriteFile(roots, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw}), 0o644)
	config := filepath.Join(dir, "proxy.yaml")
	os.WriteFile(config, []byte(fmt.Sprintf("allow: [%s]\nrules:\n  - {name: warm, url: %s/warm, mode: passthrough}\n  - {name: model, url: %s/}\n",
		upstream.URL, upstream.URL, upstream.URL)), 0o600)
	authority, err := ca.Load(filepath.Join(dir, "config", "agentvcr"))
	if err != nil {
		b.Fatal(err)
	}
	environ := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "CI=", "SSL_CERT_FILE="+roots)

	const total, inFlight = 2000, 4
	layouts := []struct {
		name          string
		mode, outcome string
		procs, dirs   int
	}{
		{"record-1-process", "record", "recorded", 1, 1},
		{"record-4-processes-1-dir", "record", "recorded", 4, 1},
		{"record-4-processes-4-dirs", "record", "recorded", 4, 4},
		{"passthrough-1-process", "passthrough", "passthrough", 1, 1},
		{"passthrough-4-processes", "passthrough", "passthrough", 4, 4},
	}
	perSecond := map[string]float64{}
	for range b.N {
		for _, l := range layouts {
			run := b.TempDir()
			procs := make([]*recordingProcess, l.procs)
			for i := range procs {
				procs[i] = startRecording(b, bin, environ, authority, "--config", config, "--mode", l.mode, "--dir", filepath.Join(run, fmt.Sprint(i%l.dirs)))
				procs[i].warm(b, upstream.URL)
			}
			// Each of the four in flight goes through its own process,
			// or all through the one.
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, inFlight)
			for c := range inFlight {
				pp := procs[c%l.procs]
				wg.Go(func() {
					for n := c; n < total; n += inFlight {
						resp, err := pp.client.Post(upstream.URL+"/v1/messages", "application/json",
							strings.NewReader(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"question %d"}]}`, n)))
						if err != nil {
							errs <- err
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.Header.Get("X-Agentvcr") != l.outcome {
							errs <- fmt.Errorf("request %d: %s", n, resp.Header.Get("X-Agentvcr"))
							return
						}
					}
				})
			}
			wg.Wait()
			for _, pp := range procs {
				pp.stop(b)
			}
			elapsed := time.Since(start)
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			if l.mode == "record" {
				got := 0
				for d := range l.dirs {
					c, err := cassette.Load(filepath.Join(run, fmt.Sprint(d), "model.yaml"))
					if err != nil {
						b.Fatal(err)
					}
					got += len(c.Interactions)
				}
				if got != total {
					b.Fatalf("%s: the cassettes hold %d recordings; %d were made", l.name, got, total)
				}
			}
			perSecond[l.name] += float64(total) / elapsed.Seconds()
		}
	}
	for _, l := range layouts {
		b.ReportMetric(perSecond[l.name]/float64(b.N), l.name+"-req/s")
	}
	b.ReportMetric(perSecond["record-4-processes-1-dir"]/perSecond["record-1-process"], "ratio-record-4procs/1proc")
	b.ReportMetric(perSecond["passthrough-4-processes"]/perSecond["passthrough-1-process"], "ratio-passthrough-4procs/1proc")
	b.ReportMetric(perSecond["record-4-processes-1-dir"]/perSecond["record-4-processes-4-dirs"], "ratio-record-1dir/4dirs")
}

// recordingProcess is `recorder proxy` as a process of its own, and an
// agent's client through it.
type recordingProcess struct {
	cmd    *exec.Cmd
	client *http.Client
	stderr strings.Builder
}

// startRecording runs `bin proxy args...` and returns once it is ready,
// with a client that trusts authority, the proxy's CA.
func startRecording(b *testing.B, bin string, environ []string, authority *ca.Authority, args ...string) *recordingProcess {
	b.Helper()
	pp := &recordingProcess{cmd: exec.Command(bin, append([]string{"proxy", "--listen", "127.0.0.1:0", "--quiet"}, args...)...)}
	pp.cmd.Env = environ
	pp.cmd.Stderr = &pp.stderr
	out, err := pp.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := pp.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if pp.cmd.ProcessState == nil {
			pp.cmd.Process.Kill()
			pp.cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
		io.Copy(io.Discard, out)
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(30 * time.Second):
		b.Fatalf("recorder proxy printed no ready line in 30 s")
	}
	var ready struct{ Proxy string }
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		b.Fatalf("ready line %q: %v", line, err)
	}
	pp.client = trusting(ready.Proxy, authority.Cert.Raw)
	return pp
}

// warm makes the connection and the leaf certificate, recording nothing.
func (pp *recordingProcess) warm(b *testing.B, upstream string) {
	b.Helper()
	for range 8 {
		resp, err := pp.client.Post(upstream+"/warm", "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// stop sends SIGTERM and waits for the process to write what it
// recorded and exit.
func (pp *recordingProcess) stop(b *testing.B) {
	b.Helper()
	pp.client.CloseIdleConnections()
	pp.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- pp.cmd.Wait() }()
	select {
	case <-done:
		if code := pp.cmd.ProcessState.ExitCode(); code != 130 {
			b.Fatalf("recorder proxy exited %d; want 130:\n%s", code, pp.stderr.String())
		}
	case <-time.After(60 * time.Second):
		b.Fatalf("recorder proxy did not stop within 60 s of SIGTERM")
	}
}
