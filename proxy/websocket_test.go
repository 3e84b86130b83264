package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsEcho is a WebSocket server that sends back each message it gets.
func wsEcho(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Errorf("upstream: accept: %v", err)
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, b); err != nil {
				return
			}
		}
	})
}

// A WebSocket through the proxy, with a real client and server, is
// carried live in every mode that may go live, and recorded in none; in
// mode replay it misses at once with a 412 that says why. Nothing hangs:
// the client's close handshake and the proxy's shutdown end at once.
func TestAWebSocketPassesThroughAndNeverHangs(t *testing.T) {
	cases := []struct {
		name string
		mode Mode
		tls  bool
		want Outcome // "" for a miss
	}{
		{"record", ModeRecord, true, OutcomeLive},
		{"auto", ModeAuto, true, OutcomeLive},
		{"passthrough", ModePassthrough, true, OutcomePassthrough},
		{"replay", ModeReplay, true, ""},
		{"record, ws:// without a tunnel", ModeRecord, false, OutcomeLive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			upstream := httptest.NewUnstartedServer(wsEcho(t))
			if tc.tls {
				upstream.StartTLS()
			} else {
				upstream.Start()
			}
			defer upstream.Close()
			dir := t.TempDir()
			p, client := front(t, upstream, tc.mode, dir, Rule{Name: "ws", URLPrefix: upstream.URL + "/"})
			var mu sync.Mutex
			var events []EventType
			defer p.Subscribe(func(_ context.Context, ev Event) {
				mu.Lock()
				events = append(events, ev.Type)
				mu.Unlock()
			})()

			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			url := "ws" + strings.TrimPrefix(upstream.URL, "http") + "/chat"
			start := time.Now()
			c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
			if tc.want == "" {
				if err == nil {
					c.CloseNow()
					t.Fatal("the WebSocket opened in mode replay; want a miss")
				}
				if resp == nil || resp.StatusCode != http.StatusPreconditionFailed || OutcomeOf(resp) != OutcomeMissed {
					t.Fatalf("dial in replay: %v, %+v; want a 412, missed", err, resp)
				}
				b, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(b), "WebSocket") || !strings.Contains(string(b), "passthrough") {
					t.Fatalf("the 412 says %s; want why (a WebSocket is never recorded) and what to do", b)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("the miss took %s", d)
				}
				if s := p.Stats(); s.Missed != 1 || len(p.Misses()) != 1 {
					t.Fatalf("stats %+v, misses %+v; want the miss counted and reported", s, p.Misses())
				}
				settle(t, p)
				return
			}
			if err != nil {
				t.Fatalf("dial through the proxy in mode %s: %v", tc.mode, err)
			}
			defer c.CloseNow()
			if got := OutcomeOf(resp); got != tc.want {
				t.Fatalf("the upgrade's outcome is %q; want %q", got, tc.want)
			}
			for _, msg := range []string{"hello", "again"} {
				if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
					t.Fatal(err)
				}
				_, b, err := c.Read(ctx)
				if err != nil || string(b) != msg {
					t.Fatalf("echo of %q: %q, %v", msg, b, err)
				}
			}
			// The proxy stops while the WebSocket is open: an upgraded
			// connection is not an exchange it waits for.
			stopCtx, stop := context.WithTimeout(t.Context(), 2*time.Second)
			defer stop()
			if err := p.Shutdown(stopCtx); err != nil {
				t.Fatalf("shutdown with a WebSocket open: %v", err)
			}
			closed := time.Now()
			if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
				t.Fatalf("close: %v", err)
			}
			// coder/websocket waits up to 5 s for the peer's close frame.
			if d := time.Since(closed); d > 2*time.Second {
				t.Fatalf("the close handshake took %s through the proxy; want it at once", d)
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			if s := p.Stats(); s.Recorded != 0 {
				t.Fatalf("stats %+v: a WebSocket was recorded", s)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws.yaml")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a cassette was written for a WebSocket: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(events) == 0 || events[len(events)-1] != EventDone {
				t.Fatalf("events %v; want the exchange reported, ending at the upgrade", events)
			}
		})
	}
}
