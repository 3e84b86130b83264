package proxy

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

const crashEnv = "AGENTVCR_PROXY_CRASH_DIR"

// TestCrashLeavesCassettesIntact kills a proxy with SIGKILL while it
// records a stream, and checks that the cassette it had written is whole.
func TestCrashLeavesCassettesIntact(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "READY" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the helper ended before it was recording")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the helper did not get ready")
	}
	cmd.Process.Kill()
	cmd.Wait()

	c, err := cassette.Load(filepath.Join(dir, "model.yaml"))
	if err != nil {
		t.Fatalf("the cassette written before the crash: %v", err)
	}
	if len(c.Interactions) != 1 || !strings.Contains(c.Interactions[0].Request.Body, "kept") {
		t.Fatalf("cassette holds %d interactions; want the one recorded before the crash", len(c.Interactions))
	}
	// Nothing half-written is left; the lock file writers take turns at
	// stays, as it must (see cassette.Merge).
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{".model.yaml.lock", "model.yaml"}) {
		t.Fatalf("the directory holds %v; want only the cassette and its lock file", names)
	}
}

// TestCrashHelper is the proxy TestCrashLeavesCassettesIntact kills.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		return // not a test of its own: TestCrashLeavesCassettesIntact runs it
	}
	r := newRig(t, ModeAuto, dir)
	r.post(t, "/v1/messages", `{"prompt":"kept"}`)
	if err := r.proxy.Flush(); err != nil || r.proxy.Stats().Recorded != 1 {
		t.Fatalf("recorded %d: %v", r.proxy.Stats().Recorded, err)
	}
	req, _ := http.NewRequest("POST", r.upstream.URL+"/v1/stream", strings.NewReader(`{"stream":true}`))
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.HasPrefix(line, "event:") {
		t.Fatalf("stream began with %q", line)
	}
	fmt.Println("READY")
	time.Sleep(time.Minute)
}
