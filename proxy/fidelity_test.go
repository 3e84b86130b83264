package proxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A replay answers as the origin did, as HTTP says it must to each
// client: HEAD gets the recorded headers with the recorded length and no
// body, a recorded "Connection: close" closes the connection, and an
// HTTP/1.0 client gets a body it can read, without chunks. Recorded from
// a real server, replayed with it gone, read by curl and Go's net/http.
func TestAReplayKeepsHTTPAsRecorded(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not installed: apt-get install curl (.ci/run does)")
	}
	const doc = `{"id":"doc-1","text":"a document of some length"}`
	events := []string{"data: one\n\n", "data: two\n\n", "data: three\n\n"}
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		io.WriteString(w, doc)
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/bye", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	up := httptest.NewTLSServer(mux)
	defer up.Close()
	p, client := front(t, up, ModeAuto, t.TempDir(), Rule{Name: "web", URLPrefix: up.URL + "/"})
	for _, r := range []struct{ method, path string }{{"GET", "/doc"}, {"HEAD", "/doc"}, {"GET", "/stream"}, {"GET", "/bye"}} {
		req, _ := http.NewRequest(r.method, up.URL+r.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if OutcomeOf(resp) != OutcomeRecorded {
			t.Fatalf("%s %s: %s; want it recorded", r.method, r.path, OutcomeOf(resp))
		}
	}
	// The proxy records a body once it has read its end, a moment after
	// the client has it.
	for deadline := time.Now().Add(5 * time.Second); p.Stats().Recorded != 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("recorded %d; want 4", p.Stats().Recorded)
		}
	}
	up.Close()
	p, client = restart(t, up, p, func(p *Proxy) { p.Mode = ModeReplay })
	proxyURL, err := client.Transport.(*http.Transport).Proxy(&http.Request{URL: mustParse(up.URL)})
	if err != nil {
		t.Fatal(err)
	}
	curl := func(t *testing.T, args ...string) string {
		t.Helper()
		args = append([]string{"-sS", "-D", "-", "--suppress-connect-headers", "--proxy", proxyURL.String(), "--cacert", p.CA.CertPath, "--max-time", "10"}, args...)
		out, err := exec.Command("curl", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.ReplaceAll(string(out), "\r\n", "\n")
	}
	header := func(out, name string) string {
		head, _, _ := strings.Cut(out, "\n\n")
		for line := range strings.SplitSeq(head, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}

	t.Run("HEAD with curl -I", func(t *testing.T) {
		out := curl(t, "-I", up.URL+"/doc")
		if header(out, "Content-Length") != strconv.Itoa(len(doc)) || header(out, "Content-Type") != "application/json" || header(out, Header) != "replayed" {
			t.Fatalf("curl -I got\n%s\nwant the recorded headers, Content-Length %d", out, len(doc))
		}
	})
	t.Run("HEAD with Go", func(t *testing.T) {
		resp, err := client.Head(up.URL + "/doc")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ContentLength != int64(len(doc)) || OutcomeOf(resp) != OutcomeReplayed {
			t.Fatalf("HEAD: Content-Length %d, %s; want %d, replayed", resp.ContentLength, OutcomeOf(resp), len(doc))
		}
		// The connection goes on: no body was sent that the length
		// would have announced.
		reused := false
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", up.URL+"/doc", nil)
		resp, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != doc || !reused {
			t.Fatalf("GET after HEAD: %q, reused %v; want the document on the same connection", b, reused)
		}
	})
	t.Run("Connection: close", func(t *testing.T) {
		resp, err := client.Get(up.URL + "/bye")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "bye" || !resp.Close || OutcomeOf(resp) != OutcomeReplayed {
			t.Fatalf("GET /bye: %q, close %v, %s; want the recorded Connection: close", b, resp.Close, OutcomeOf(resp))
		}
		reused := true
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "GET", up.URL+"/doc", nil)
		if resp, err = client.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if reused {
			t.Fatal("the next request reused the connection a recorded Connection: close closed")
		}
	})
	t.Run("HTTP/1.0 with curl", func(t *testing.T) {
		for _, tc := range []struct{ path, body, length string }{
			{"/stream", strings.Join(events, ""), ""}, // ends when the connection does
			{"/doc", doc, strconv.Itoa(len(doc))},     // its length up front
		} {
			out := curl(t, "--http1.0", up.URL+tc.path)
			head, body, _ := strings.Cut(out, "\n\n")
			if header(out, "Transfer-Encoding") != "" || header(out, "Content-Length") != tc.length || body != tc.body || header(out, Header) != "replayed" {
				t.Fatalf("curl --http1.0 %s got\n%s\n\n%q\nwant %q without chunks, Content-Length %q", tc.path, head, body, tc.body, tc.length)
			}
		}
	})
	t.Run("HTTP/1.1 still chunks a stream", func(t *testing.T) {
		resp, err := client.Get(up.URL + "/stream")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if fmt.Sprint(resp.TransferEncoding) != "[chunked]" || string(b) != strings.Join(events, "") || resp.Close {
			t.Fatalf("GET /stream: %v %q close %v; want it chunked, whole, the connection kept", resp.TransferEncoding, b, resp.Close)
		}
	})
	settle(t, p)
}
