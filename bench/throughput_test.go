package bench

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy"
)

// jsonRequest is a 117-byte model request.
const jsonRequest = `{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"Did deploy 42 go out? Say yes."}]}`

// serverRoleEnv makes the test binary the server side of
// BenchmarkReplayThroughput: the upstream and the replaying proxy, on the
// core it is pinned to.
const serverRoleEnv = "AGENTVCR_BENCH_LOAD_SERVER"

// sseEvents is a 50-event Anthropic stream of about 6 KB, each event its
// own chunk on the wire, as a model sends it.
func sseEvents() []string {
	events := []string{`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_bench","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n",
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n"}
	for i := 0; len(events) < 48; i++ {
		events = append(events, fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word %02d of the answer \"}}\n\n", i))
	}
	return append(events, `event: content_block_stop`+"\n"+`data: {"type":"content_block_stop","index":0}`+"\n\n",
		`event: message_stop`+"\n"+`data: {"type":"message_stop"}`+"\n\n")
}

// loadServer is what the server side tells the benchmark: where the
// upstream listens, and its CA certificate.
type loadServer struct {
	Upstream   string
	UpstreamCA []byte

	pid int // the server's process, whose CPU time is measured
}

// serveLoad is the server side: a local TLS upstream. It prints a
// loadServer line and serves until its stdin closes.
func serveLoad() int {
	events := sseEvents()
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/stream" {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range events {
				io.WriteString(w, e)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Yes."}],"usage":{"input_tokens":12,"output_tokens":2}}`)
	}))
	// mitmdump opens connections it never uses: not worth a log line.
	upstream.Config.ErrorLog = log.New(io.Discard, "", 0)
	upstream.StartTLS()
	defer upstream.Close()
	line, _ := json.Marshal(loadServer{Upstream: upstream.URL, UpstreamCA: upstream.Certificate().Raw})
	fmt.Println(string(line))
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// server is a process of the benchmark's server side, pinned to the
// server's core: a proxy, or mitmdump.
type server struct {
	url     string // where it listens
	ca      []byte // the CA certificate its clients trust
	pid     int
	startMs float64 // how long bench/proxyonly took to start its proxy
}

// serverCore is the core the server side is pinned to, the last; the
// client runs on the others (see startPinned).
func serverCore() string { return strconv.Itoa(runtime.NumCPU() - 1) }

// recorderProxy runs `recorder proxy` as a user does, pinned to the
// server's core, with args added, its log written to a file as a CI job
// keeps it, and returns once it is ready. It stops at the benchmark's
// end, or when the returned function is called, which waits for it to
// write what it recorded.
func recorderProxy(b *testing.B, caDir string, args ...string) (*server, func()) {
	b.Helper()
	logFile, err := os.Create(filepath.Join(b.TempDir(), "proxy.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logFile.Close() })
	cmd := exec.Command("taskset", append([]string{"-c", serverCore(), buildRecorder(b), "proxy", "--listen", "127.0.0.1:0",
		"--control", "127.0.0.1:0", "--ca-dir", caDir, "--exit-on-stdin-close"}, args...)...)
	cmd.Stderr = logFile
	return startProxyCmd(b, cmd)
}

// startProxyCmd starts a proxy that prints a ready line, {"proxy": URL,
// "ca": PATH}, and serves until its stdin closes. It stops at the
// benchmark's end, or when the returned function is called, which waits
// for it to exit.
func startProxyCmd(b *testing.B, cmd *exec.Cmd) (*server, func()) {
	b.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close()
			cmd.Wait()
		})
	}
	b.Cleanup(stop)
	return readyServer(b, stdout, cmd.Process.Pid), stop
}

// replayProxies records the upstream's two exchanges through `recorder
// proxy --mode record`, then starts three replays of them: one logging
// each exchange, as the proxy does by default, one with --quiet, and
// bench/proxyonly.
func replayProxies(b *testing.B, ls *loadServer) (logging, quiet, lean *server) {
	b.Helper()
	dir := b.TempDir()
	caDir, cassettes, upstreamCA := filepath.Join(dir, "ca"), filepath.Join(dir, "cassettes"), filepath.Join(dir, "upstream.pem")
	if err := os.WriteFile(upstreamCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ls.UpstreamCA}), 0o600); err != nil {
		b.Fatal(err)
	}
	rec, stop := recorderProxy(b, caDir, "--mode", "record", "--dir", cassettes, "--allow", ls.Upstream, "--upstream-ca", upstreamCA)
	client := trusting(rec.url, rec.ca)
	for _, path := range []string{"/v1/messages", "/v1/stream"} {
		if _, err := fetch(client, ls.Upstream+path, jsonRequest); err != nil {
			b.Fatal(err)
		}
	}
	client.CloseIdleConnections()
	stop()
	logging, _ = recorderProxy(b, caDir, "--mode", "replay", "--dir", cassettes, "--allow", ls.Upstream)
	quiet, _ = recorderProxy(b, caDir, "--mode", "replay", "--dir", cassettes, "--allow", ls.Upstream, "--quiet")
	lean, _ = proxyOnly(b, caDir, cassettes, ls.Upstream)
	return logging, quiet, lean
}

// proxyOnlyBuild is bench/proxyonly, built once per test binary on first
// use, beside the recorder binary.
var proxyOnlyBuild struct {
	once sync.Once
	bin  string
	err  error
}

// proxyOnly starts bench/proxyonly replaying the cassettes in dir, pinned
// to the server's core. It stops at the benchmark's end, or when the
// returned function is called.
func proxyOnly(b *testing.B, caDir, dir, origin string) (*server, func()) {
	b.Helper()
	pb := &proxyOnlyBuild
	pb.once.Do(func() {
		pb.bin = filepath.Join(filepath.Dir(buildRecorder(b)), "proxyonly")
		if out, err := exec.Command("go", "build", "-o", pb.bin, "github.com/agentvcr/agentvcr/bench/proxyonly").CombinedOutput(); err != nil {
			pb.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if pb.err != nil {
		b.Fatal(pb.err)
	}
	cmd := exec.Command("taskset", "-c", serverCore(), pb.bin, caDir, dir, origin)
	cmd.Stderr = os.Stderr
	return startProxyCmd(b, cmd)
}

// readyServer reads a proxy's ready line, {"proxy": URL, "ca": PATH}.
func readyServer(b *testing.B, stdout io.Reader, pid int) *server {
	b.Helper()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the proxy printed no ready line: %v", err)
	}
	var ready struct {
		Proxy, CA string
		StartMs   float64
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		b.Fatalf("the proxy said %q: %v", line, err)
	}
	caPEM, err := os.ReadFile(ready.CA)
	if err != nil {
		b.Fatal(err)
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		b.Fatalf("%s holds no PEM block", ready.CA)
	}
	return &server{url: ready.Proxy, ca: block.Bytes, pid: pid, startMs: ready.StartMs}
}

// mitmReplay records the two exchanges through mitmdump, then starts
// mitmdump's server replay of them (server_replay_nopop, so that each
// serves again and again), pinned to the server's core.
func mitmReplay(b *testing.B, ls *loadServer) *server {
	b.Helper()
	dir := b.TempDir()
	flows := filepath.Join(dir, "flows")
	start := func(args ...string) (*exec.Cmd, string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		cmd := exec.Command("taskset", append([]string{"-c", serverCore(), "mitmdump", "-q", "--listen-host", "127.0.0.1", "--listen-port", port,
			"--set", "confdir=" + dir, "--set", "connection_strategy=lazy"}, args...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt) // mitmdump writes its flows as it stops
			cmd.Wait()
		})
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				return cmd, "http://127.0.0.1:" + port
			}
			if time.Now().After(deadline) {
				b.Fatalf("mitmdump did not listen on %s within 30 s", port)
			}
		}
	}
	rec, recURL := start("--ssl-insecure", "-w", flows)
	caPEM, err := os.ReadFile(filepath.Join(dir, "mitmproxy-ca-cert.pem"))
	if err != nil {
		b.Fatal(err)
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		b.Fatal("mitmproxy's CA certificate holds no PEM block")
	}
	client := trusting(recURL, block.Bytes)
	for _, path := range []string{"/v1/messages", "/v1/stream"} {
		if _, err := fetch(client, ls.Upstream+path, jsonRequest); err != nil {
			b.Fatalf("recording through mitmdump: %v", err)
		}
	}
	client.CloseIdleConnections()
	rec.Process.Signal(os.Interrupt)
	rec.Wait()
	replay, replayURL := start("--server-replay", flows, "--set", "server_replay_nopop=true")
	return &server{url: replayURL, ca: block.Bytes, pid: replay.Process.Pid}
}

// trusting is a client that trusts the certificate ca, through the proxy
// at proxyURL unless it is empty, with a kept-alive connection per
// worker.
func trusting(proxyURL string, ca []byte) *http.Client {
	roots := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(ca)
	roots.AddCert(cert)
	t := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: 64}
	if proxyURL != "" {
		u, _ := url.Parse(proxyURL)
		t.Proxy = http.ProxyURL(u)
	}
	return &http.Client{Transport: t}
}

// startLoadServer runs the server side in a child process pinned to the
// last core, and pins this process to the others, so that the client's
// work and the server's never share a core: the direct figure is then the
// upstream's cost, and the replay figure the proxy's.
func startLoadServer(b *testing.B) *loadServer {
	b.Helper()
	var ls loadServer
	_, ls.pid = startPinned(b, &ls, serverRoleEnv+"=1")
	return &ls
}

// startPinned runs the test binary with env added, as a server pinned to
// the last core, decodes the first line it prints into v, and pins this
// process to the other cores until the benchmark ends. The child serves
// until its stdin closes; what it prints then, the returned function
// reads.
func startPinned(b *testing.B, v any, env ...string) (stop func() string, pid int) {
	b.Helper()
	if runtime.NumCPU() < 2 {
		b.Fatal("the load needs two cores: one for the client, one for the server")
	}
	cmd := exec.Command("taskset", "-c", serverCore(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("taskset (util-linux) runs the load server: %v", err)
	}
	out := bufio.NewReader(stdout)
	var once sync.Once
	var last string
	stop = func() string {
		once.Do(func() {
			stdin.Close()
			last, _ = out.ReadString('\n')
			cmd.Wait()
		})
		return last
	}
	b.Cleanup(func() { stop() })
	pid = cmd.Process.Pid
	line, err := out.ReadString('\n')
	if err != nil {
		b.Fatalf("the load server said nothing: %v", err)
	}
	if err := json.Unmarshal([]byte(line), v); err != nil {
		b.Fatalf("the load server said %q: %v", line, err)
	}
	pinClient(b)
	return stop, pid
}

// pinClient pins this process, the client side of a load, to every core
// but the server's until the benchmark ends.
func pinClient(b *testing.B) {
	b.Helper()
	cores := runtime.NumCPU()
	if cores < 2 {
		b.Fatal("the load needs two cores: one for the client, one for the server")
	}
	client := "0"
	if cores > 2 {
		client = "0-" + strconv.Itoa(cores-2)
	}
	if out, err := exec.Command("taskset", "-a", "-p", "-c", client, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		b.Fatalf("taskset (util-linux) pins the client: %v: %s", err, out)
	}
	procs := runtime.GOMAXPROCS(max(1, cores-1))
	b.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		exec.Command("taskset", "-a", "-p", "-c", "0-"+strconv.Itoa(cores-1), strconv.Itoa(os.Getpid())).Run()
	})
}

// cpuOf returns the CPU time the process pid has run for, the sum over
// its threads of /proc's schedstat: unlike the wall clock, it does not
// count the time the machine gave to others.
func cpuOf(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no schedstat for process %d: %v", pid, err)
	}
	var total time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended
		}
		var ns int64
		fmt.Sscan(string(raw), &ns)
		total += time.Duration(ns)
	}
	return total
}

// fetch posts a request and reads the whole answer.
func fetch(c *http.Client, u, body string) (int, error) {
	resp, err := c.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", u, resp.Status)
	}
	if out := resp.Header.Get(proxy.Header); err == nil && out != "" && out != string(proxy.OutcomeReplayed) && out != string(proxy.OutcomeRecorded) {
		err = fmt.Errorf("%s: %s, not replayed", u, out)
	}
	return int(n), err
}

// same is the request body of a load that sends one request again and
// again.
func same(int64) string { return jsonRequest }

// load is what a run of rate measured.
type load struct {
	rps float64       // requests per second
	p99 time.Duration // the 99th percentile of a request's time, sent to read whole
	rss int64         // the peak resident memory of the process watched, in bytes
}

// rate runs c workers, each on its own kept-alive connection, for d, and
// measures the requests per second, the requests' p99 and, if pid is not
// 0, the peak resident memory of process pid while it served them. The
// n-th request of the run, counted across the workers, sends body(n).
func rate(b *testing.B, client func() *http.Client, u string, body func(n int64) string, c int, d time.Duration, pid int) load {
	b.Helper()
	clients := make([]*http.Client, c)
	for i := range clients {
		clients[i] = client()
		if _, err := fetch(clients[i], u, body(0)); err != nil { // warm: the tunnel and the leaf certificate
			b.Fatal(err)
		}
	}
	var sent atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	times := make([][]time.Duration, c)
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var rss int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if pid != 0 {
				rss = max(rss, procStatus(pid, "VmRSS"))
			}
			select {
			case <-done:
				peak <- rss
				return
			case <-tick.C:
			}
		}
	}()
	start := time.Now()
	deadline := start.Add(d)
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := time.Now(); t.Before(deadline); {
				_, err := fetch(cl, u, body(sent.Add(1)))
				if err != nil {
					failed.Store(err)
					return
				}
				now := time.Now()
				times[i] = append(times[i], now.Sub(t))
				t = now
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(done)
	rss := <-peak
	for _, cl := range clients {
		cl.CloseIdleConnections()
	}
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	all := slices.Concat(times...)
	slices.Sort(all)
	return load{rps: float64(len(all)) / elapsed.Seconds(), p99: all[len(all)*99/100], rss: rss}
}

// BenchmarkReplayThroughput is the load of a model gateway: a 117-byte
// JSON POST and a 50-event SSE stream, at 1, 16 and 64 concurrent
// kept-alive connections, sent directly to a local TLS upstream and
// through `recorder proxy --mode replay` replaying it, as a user runs it:
// logging each exchange to a file, and with --quiet. Each load runs for
// 1.5 s, interleaved three times. The server side (the upstream, the
// proxies, mitmdump) is pinned to one core and the client to the other
// (taskset), so that the direct figure is the upstream's cost and the
// replay figure the proxy's.
//
// It reports the median requests per second of each, the ratio
// replay/direct with its range (target >= 0.95), the ratio of the
// requests' p99 latency replay/direct (target <= 1.15), the proxy's peak
// resident memory while it serves (target <= 30 MB) beside the
// upstream's and that of bench/proxyonly, the proxy package in a program
// of its own (proxyonly-ratio, proxyonly-rss-MB: what the proxy costs
// apart from the rest of the recorder binary), and cpu-ratio: the server's CPU time per request direct
// over replay, read from /proc, which a machine that gives its cores to
// others for a while does not move as it moves req/s. mitmproxy's server
// replay is the other baseline (x-mitmproxy: replay/mitmproxy req/s); the
// benchmark says when mitmdump is absent.
//
//	go test ./bench -run '^$' -bench ReplayThroughput -benchtime 1x
func BenchmarkReplayThroughput(b *testing.B) {
	ls := startLoadServer(b)
	logging, quiet, lean := replayProxies(b, ls)
	var mitm *server
	if _, err := exec.LookPath("mitmdump"); err != nil {
		b.Log("mitmdump is not installed (Debian package mitmproxy): no mitmproxy baseline in this run")
	} else {
		mitm = mitmReplay(b, ls)
	}
	direct := func() *http.Client { return trusting("", ls.UpstreamCA) }
	for _, body := range []struct{ name, path string }{{"json", "/v1/messages"}, {"sse", "/v1/stream"}} {
		for _, c := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", body.name, c), func(b *testing.B) {
				u := ls.Upstream + body.path
				var d, r, q, l, m []load
				var ratio, quietRatio, leanRatio, p99Ratio, quietP99, leanP99, overMitm, cpuRatio []float64
				// measure runs the load on a server, and returns what
				// it measured and the server's CPU time per request.
				measure := func(client func() *http.Client, pid int) (load, time.Duration) {
					before := cpuOf(b, pid)
					l := rate(b, client, u, same, c, 1500*time.Millisecond, pid)
					return l, time.Duration(float64(cpuOf(b, pid)-before) / (l.rps * 1.5))
				}
				through := func(s *server) func() *http.Client {
					return func() *http.Client { return trusting(s.url, s.ca) }
				}
				for range 3 {
					dl, dcpu := measure(direct, ls.pid)
					rl, rcpu := measure(through(logging), logging.pid)
					ql, _ := measure(through(quiet), quiet.pid)
					ll, _ := measure(through(lean), lean.pid)
					d, r, q, l = append(d, dl), append(r, rl), append(q, ql), append(l, ll)
					ratio, quietRatio, leanRatio = append(ratio, rl.rps/dl.rps), append(quietRatio, ql.rps/dl.rps), append(leanRatio, ll.rps/dl.rps)
					p99Ratio = append(p99Ratio, float64(rl.p99)/float64(dl.p99))
					quietP99, leanP99 = append(quietP99, float64(ql.p99)/float64(dl.p99)), append(leanP99, float64(ll.p99)/float64(dl.p99))
					cpuRatio = append(cpuRatio, float64(dcpu)/float64(rcpu))
					if mitm != nil {
						ml, _ := measure(through(mitm), mitm.pid)
						m, overMitm = append(m, ml), append(overMitm, rl.rps/ml.rps)
					}
				}
				rps := func(ls []load) []float64 {
					var v []float64
					for _, l := range ls {
						v = append(v, l.rps)
					}
					return v
				}
				mb := func(ls []load) float64 {
					var peak int64
					for _, l := range ls {
						peak = max(peak, l.rss)
					}
					return float64(peak) / (1 << 20)
				}
				p99 := func(ls []load) float64 {
					var v []float64
					for _, l := range ls {
						v = append(v, float64(l.p99.Microseconds()))
					}
					return median(v)
				}
				b.ReportMetric(p99(d), "direct-p99-µs")
				b.ReportMetric(p99(r), "replay-p99-µs")
				b.ReportMetric(median(rps(d)), "direct-req/s")
				b.ReportMetric(median(rps(r)), "replay-req/s")
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(slices.Min(ratio), "ratio-min")
				b.ReportMetric(slices.Max(ratio), "ratio-max")
				b.ReportMetric(median(quietRatio), "quiet-ratio")
				b.ReportMetric(median(leanRatio), "proxyonly-ratio")
				b.ReportMetric(median(p99Ratio), "p99-ratio")
				b.ReportMetric(slices.Min(p99Ratio), "p99-ratio-min")
				b.ReportMetric(slices.Max(p99Ratio), "p99-ratio-max")
				b.ReportMetric(median(quietP99), "quiet-p99-ratio")
				b.ReportMetric(median(leanP99), "proxyonly-p99-ratio")
				b.ReportMetric(median(cpuRatio), "cpu-ratio")
				b.ReportMetric(mb(r), "proxy-rss-MB")
				b.ReportMetric(mb(q), "quiet-rss-MB")
				b.ReportMetric(mb(l), "proxyonly-rss-MB")
				b.ReportMetric(mb(d), "upstream-rss-MB")
				if mitm != nil {
					b.ReportMetric(median(rps(m)), "mitmproxy-req/s")
					b.ReportMetric(median(overMitm), "x-mitmproxy")
					b.ReportMetric(slices.Min(overMitm), "x-mitmproxy-min")
					b.ReportMetric(mb(m), "mitmproxy-rss-MB")
				}
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
