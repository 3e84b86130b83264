//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestFixtureServeEndsWithItsParent: recorder fixture serve prints its
// start line, answers its token, starts a PostgreSQL of its own for a
// fixture's database, and at the end of its standard input deletes the
// fixtures left, stops that PostgreSQL and exits 130.
func TestFixtureServeEndsWithItsParent(t *testing.T) {
	bin := build(t, t.TempDir(), "recorder", ".")
	cmd := exec.Command(bin, "fixture", "serve", "--exit-on-stdin-close")
	stdin, first, exited, stderr := startPiped(t, cmd)
	var ready struct{ URL, Token string }
	if err := json.Unmarshal([]byte(first), &ready); err != nil || !strings.HasPrefix(ready.URL, "http://127.0.0.1:") || len(ready.Token) < 32 {
		t.Fatalf("start line %+v: %v", ready, err)
	}
	call := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, ready.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+ready.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	if status, _ := call("GET", "/v1/openapi.json", ""); status != http.StatusOK {
		t.Fatalf("openapi: %d", status)
	}
	// An attached app's fixture: its database is made, then it waits for
	// the app, which never comes.
	status, raw := call("POST", "/v1/fixtures", `{"name": "left open", "app": {"name": "never attached", "attach": true, "routes": {"preset": "junior"}}}`)
	var st struct {
		Start struct{ Env map[string]string }
	}
	if status != http.StatusCreated || json.Unmarshal(raw, &st) != nil || st.Start.Env["DATABASE_URL"] == "" {
		t.Fatalf("create: %d %s\n%s", status, raw, stderr)
	}
	db := st.Start.Env["DATABASE_URL"]
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatalf("the fixture's database: %v", err)
	}
	conn.Close(t.Context())
	http.DefaultClient.CloseIdleConnections()
	stdin.Close()
	code := receive(t, exited, "the service's exit after its stdin closed")
	exited <- code // for the cleanup
	if code != 130 {
		t.Fatalf("exit %d; want 130:\n%s", code, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, db); err == nil {
		conn.Close(ctx)
		t.Fatal("the service's PostgreSQL still serves after it exited")
	}
}

// fixture serve listens on loopback only: it runs commands and makes
// databases for whoever holds its token.
func TestFixtureServeRefusesANonLoopbackAddress(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"fixture", "serve", "--listen", "0.0.0.0:0"}, strings.NewReader(""), &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "loopback only") {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
}
