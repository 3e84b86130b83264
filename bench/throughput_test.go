package bench

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
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
	"github.com/agentvcr/agentvcr/proxy/ca"
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
// upstream and the proxy listen, and the CA certificates to trust.
type loadServer struct {
	Upstream, Proxy     string
	UpstreamCA, ProxyCA []byte
	// Mitm and MitmCA are mitmproxy's server replay of the same
	// exchanges, when mitmdump is installed.
	Mitm   string
	MitmCA []byte

	pid int // the server's process, whose CPU time is measured
}

// serveLoad is the server side: a local TLS upstream, and agentvcr's
// proxy replaying what it recorded from it. It prints a loadServer line
// and serves until its stdin closes.
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
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "load server:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "agentvcr-load-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	authority, err := ca.Load(filepath.Join(dir, "ca"))
	if err != nil {
		return fail(err)
	}
	rules := []proxy.Rule{{Name: "model", Method: "POST", URLPrefix: upstream.URL + "/"}}
	rec := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModeRecord, Dir: dir,
		Upstream: upstream.Client().Transport.(*http.Transport).Clone(), Rules: rules}
	recSrv := httptest.NewServer(rec)
	client := trusting(recSrv.URL, authority.Cert.Raw)
	for _, path := range []string{"/v1/messages", "/v1/stream"} {
		if _, err := fetch(client, upstream.URL+path, jsonRequest); err != nil {
			return fail(err)
		}
	}
	recSrv.Close()
	if err := rec.Flush(); err != nil {
		return fail(err)
	}
	replay := &proxy.Proxy{CA: authority, Allow: []string{upstream.URL}, Mode: proxy.ModeReplay, Dir: dir, Rules: rules}
	srv := httptest.NewServer(replay)
	defer srv.Close()
	ls := loadServer{Upstream: upstream.URL, Proxy: srv.URL, UpstreamCA: upstream.Certificate().Raw, ProxyCA: authority.Cert.Raw}
	if _, err := exec.LookPath("mitmdump"); err == nil {
		stop, err := mitmReplay(&ls, filepath.Join(dir, "mitm"))
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	line, _ := json.Marshal(ls)
	fmt.Println(string(line))
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// mitmReplay records the two exchanges through mitmdump, then starts
// mitmdump's server replay of them (server_replay_nopop, so that each
// serves again and again), and sets ls.Mitm and ls.MitmCA.
func mitmReplay(ls *loadServer, dir string) (stop func(), err error) {
	flows := filepath.Join(dir, "flows")
	start := func(args ...string) (*exec.Cmd, string, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", err
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		cmd := exec.Command("mitmdump", append([]string{"-q", "--listen-host", "127.0.0.1", "--listen-port", port,
			"--set", "confdir=" + dir, "--set", "connection_strategy=lazy"}, args...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return nil, "", err
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				return cmd, "http://127.0.0.1:" + port, nil
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				return nil, "", fmt.Errorf("mitmdump did not listen on %s within 30 s", port)
			}
		}
	}
	end := func(cmd *exec.Cmd) {
		cmd.Process.Signal(os.Interrupt) // mitmdump writes its flows as it stops
		cmd.Wait()
	}
	rec, recURL, err := start("--ssl-insecure", "-w", flows)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "mitmproxy-ca-cert.pem"))
	if err != nil {
		end(rec)
		return nil, err
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		end(rec)
		return nil, errors.New("mitmproxy's CA certificate holds no PEM block")
	}
	client := trusting(recURL, block.Bytes)
	for _, path := range []string{"/v1/messages", "/v1/stream"} {
		if _, err := fetch(client, ls.Upstream+path, jsonRequest); err != nil {
			end(rec)
			return nil, fmt.Errorf("recording through mitmdump: %w", err)
		}
	}
	client.CloseIdleConnections()
	end(rec)
	replay, replayURL, err := start("--server-replay", flows, "--set", "server_replay_nopop=true")
	if err != nil {
		return nil, err
	}
	ls.Mitm, ls.MitmCA = replayURL, block.Bytes
	return func() { end(replay) }, nil
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
	cores := runtime.NumCPU()
	if cores < 2 {
		b.Fatal("the load needs two cores: one for the client, one for the server")
	}
	server := strconv.Itoa(cores - 1)
	client := "0"
	if cores > 2 {
		client = "0-" + strconv.Itoa(cores-2)
	}
	cmd := exec.Command("taskset", "-c", server, os.Args[0], "-test.run=^$")
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
	if out, err := exec.Command("taskset", "-a", "-p", "-c", client, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		b.Fatalf("taskset: %v: %s", err, out)
	}
	procs := runtime.GOMAXPROCS(max(1, cores-1))
	b.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		exec.Command("taskset", "-a", "-p", "-c", "0-"+strconv.Itoa(cores-1), strconv.Itoa(os.Getpid())).Run()
	})
	return stop, pid
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

// rate runs c workers, each on its own kept-alive connection, for d and
// returns the requests per second. The n-th request of the run, counted
// across the workers, sends body(n).
func rate(b *testing.B, client func() *http.Client, u string, body func(n int64) string, c int, d time.Duration) float64 {
	b.Helper()
	clients := make([]*http.Client, c)
	for i := range clients {
		clients[i] = client()
		if _, err := fetch(clients[i], u, body(0)); err != nil { // warm: the tunnel and the leaf certificate
			b.Fatal(err)
		}
	}
	var n, sent atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := fetch(cl, u, body(sent.Add(1))); err != nil {
					failed.Store(err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, cl := range clients {
		cl.CloseIdleConnections()
	}
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return float64(n.Load()) / elapsed.Seconds()
}

// BenchmarkReplayThroughput is the load of a model gateway: a 117-byte
// JSON POST and a 50-event SSE stream, at 1, 16 and 64 concurrent
// kept-alive connections, sent directly to a local TLS upstream and
// through the proxy replaying it, interleaved three times. The server
// side (upstream and proxy) runs pinned to one core and the client to the
// other (taskset). It reports the median requests per second of each and
// the ratio replay/direct (target >= 0.8), with the ratio's range, and
// cpu-ratio: the server's CPU time per request direct over replay, read
// from /proc, which a machine that gives its cores to others for a while
// does not move as it moves req/s.
// mitmproxy's server replay is the other baseline; the benchmark says
// when mitmdump is absent.
//
//	go test ./bench -run '^$' -bench ReplayThroughput -benchtime 1x
func BenchmarkReplayThroughput(b *testing.B) {
	if _, err := exec.LookPath("mitmdump"); err != nil {
		b.Log("mitmdump is not installed (Debian package mitmproxy): no mitmproxy baseline in this run")
	}
	ls := startLoadServer(b)
	direct := func() *http.Client { return trusting("", ls.UpstreamCA) }
	replay := func() *http.Client { return trusting(ls.Proxy, ls.ProxyCA) }
	mitm := func() *http.Client { return trusting(ls.Mitm, ls.MitmCA) }
	for _, body := range []struct{ name, path string }{{"json", "/v1/messages"}, {"sse", "/v1/stream"}} {
		for _, c := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/c=%d", body.name, c), func(b *testing.B) {
				u := ls.Upstream + body.path
				var d, r, m, ratio, overMitm, cpuRatio []float64
				// perRequest runs the load, and returns its req/s and
				// the server's CPU time per request.
				perRequest := func(client func() *http.Client) (float64, time.Duration) {
					before := cpuOf(b, ls.pid)
					rps := rate(b, client, u, same, c, 1500*time.Millisecond)
					return rps, time.Duration(float64(cpuOf(b, ls.pid)-before) / (rps * 1.5))
				}
				for range 3 {
					dr, dcpu := perRequest(direct)
					rr, rcpu := perRequest(replay)
					d, r, ratio = append(d, dr), append(r, rr), append(ratio, rr/dr)
					cpuRatio = append(cpuRatio, float64(dcpu)/float64(rcpu))
					if ls.Mitm != "" {
						mr := rate(b, mitm, u, same, c, 1500*time.Millisecond)
						m, overMitm = append(m, mr), append(overMitm, rr/mr)
					}
				}
				b.ReportMetric(median(d), "direct-req/s")
				b.ReportMetric(median(r), "replay-req/s")
				b.ReportMetric(median(ratio), "ratio")
				b.ReportMetric(slices.Min(ratio), "ratio-min")
				b.ReportMetric(slices.Max(ratio), "ratio-max")
				b.ReportMetric(median(cpuRatio), "cpu-ratio")
				if ls.Mitm != "" {
					b.ReportMetric(median(m), "mitmproxy-req/s")
					b.ReportMetric(median(overMitm), "x-mitmproxy")
					b.ReportMetric(slices.Min(overMitm), "x-mitmproxy-min")
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
