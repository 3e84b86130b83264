//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startPiped starts cmd with its stdin a pipe the test holds, and
// returns that pipe, the first line cmd printed, a channel that gets its
// exit code (sent again after a receive, for the next reader), and its
// stderr. The process is killed when the test ends.
func startPiped(t *testing.T, cmd *exec.Cmd) (stdin io.WriteCloser, first string, exited chan int, stderr *bytes.Buffer) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan int, 1)
	go func() { cmd.Wait(); exited <- cmd.ProcessState.ExitCode() }()
	t.Cleanup(func() { cmd.Process.Kill(); exited <- receive(t, exited, "the killed process's exit") })
	lines := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(stdout).ReadString('\n'); lines <- l }()
	return stdin, receive(t, lines, "the first line"), exited, stderr
}

// TestProxyExitsOnStdinClose: with --exit-on-stdin-close the proxy stops
// at the end of its standard input as on SIGTERM (the open scope ended as
// failed, the counts said, exit 130), and so it ends with the parent that
// holds the other end of the pipe, even one killed with SIGKILL.
func TestProxyExitsOnStdinClose(t *testing.T) {
	bin := build(t, t.TempDir(), "recorder", ".")
	environ := append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "CI=")
	args := []string{"proxy", "--listen", "127.0.0.1:0", "--dir", filepath.Join(t.TempDir(), "cassettes"), "--exit-on-stdin-close"}

	t.Run("stdin closed", func(t *testing.T) {
		cmd := exec.Command(bin, args...)
		cmd.Env = environ
		stdin, first, exited, stderr := startPiped(t, cmd)
		var ready struct{ Control, Token string }
		if err := json.Unmarshal([]byte(first), &ready); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", ready.Control+"/v1/scopes", strings.NewReader(`{"name":"t1"}`))
		req.Header.Set("Authorization", "Bearer "+ready.Token)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
			t.Fatalf("open a scope: %v %v", err, resp)
		} else {
			resp.Body.Close()
		}
		http.DefaultClient.CloseIdleConnections()
		stdin.Close()
		code := receive(t, exited, "the proxy's exit after its stdin closed")
		exited <- code // for the cleanup
		if code != 130 {
			t.Fatalf("exit %d; want 130:\n%s", code, stderr)
		}
		for _, want := range []string{"standard input closed", "stopping: no new requests", "scope ended as failed", "stopped: interrupted"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, stderr)
			}
		}
	})

	t.Run("parent killed", func(t *testing.T) {
		// The parent, a shell, holds the pipe's write end (fd 4); the
		// proxy gets the read end (fd 3) as stdin and neither end else.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stderrFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		defer stderrFile.Close()
		parent := exec.Command("sh", append([]string{"-c", `"$0" "$@" <&3 3<&- 4>&- & echo "pid $!"; wait`, bin}, args...)...)
		parent.Env = environ
		parent.ExtraFiles = []*os.File{r, w}
		parent.Stderr = stderrFile
		// A pipe of the test's own, not StdoutPipe, which Wait closes when
		// the parent ends: the proxy holds its write end till it exits.
		stdout, stdoutW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdout.Close()
		parent.Stdout = stdoutW
		if err := parent.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		w.Close()
		stdoutW.Close()
		parentDone := make(chan struct{})
		go func() { parent.Wait(); close(parentDone) }()
		// Lines until the proxy's stdout closes: it has exited then (the
		// parent, dead, holds that pipe no more).
		lines := make(chan string, 10)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		pid, ready := 0, false
		t.Cleanup(func() {
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL) // a proxy that stayed
			}
		})
		for pid == 0 || !ready {
			l, ok := <-lines
			if !ok {
				t.Fatalf("stdout closed before the ready line:\n%s", readFile(t, stderrFile.Name()))
			}
			if n, found := strings.CutPrefix(l, "pid "); found {
				pid, _ = strconv.Atoi(n)
			}
			ready = ready || strings.HasPrefix(l, "{")
		}
		if err := parent.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		receive(t, parentDone, "the killed parent's exit")
		deadline := time.After(20 * time.Second)
		for open := true; open; {
			select {
			case _, open = <-lines:
			case <-deadline:
				t.Fatalf("the proxy (pid %d) runs on 20 s after its parent was killed:\n%s", pid, readFile(t, stderrFile.Name()))
			}
		}
		pid = 0 // exited: its stdout closed
		said := readFile(t, stderrFile.Name())
		for _, want := range []string{"standard input closed", "stopping: no new requests", "stopped: interrupted"} {
			if !strings.Contains(said, want) {
				t.Errorf("stderr does not say %q:\n%s", want, said)
			}
		}
	})
}

// readFile returns what the file name holds.
func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
