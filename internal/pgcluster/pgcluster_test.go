package pgcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startCluster starts a cluster that is stopped when t is done.
func startCluster(t *testing.T) *Cluster {
	t.Helper()
	begin := time.Now()
	c, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Start took %v", time.Since(begin))
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// connect opens a connection that is closed when t is done.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// hasTable reports whether the database conn is connected to has a table
// named name.
func hasTable(t *testing.T, conn *pgx.Conn, name string) bool {
	t.Helper()
	var found bool
	if err := conn.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", name).Scan(&found); err != nil {
		t.Fatal(err)
	}
	return found
}

func TestStartCreatesIsolatedDatabases(t *testing.T) {
	t.Parallel()
	c := startCluster(t)

	urlA, err := c.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	urlB, err := c.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if urlA == urlB {
		t.Fatalf("CreateDatabase returned %s twice", urlA)
	}
	a, b := connect(t, urlA), connect(t, urlB)

	if _, err := a.Exec(t.Context(), "CREATE TABLE recordings (id int)"); err != nil {
		t.Fatal(err)
	}
	if !hasTable(t, a, "recordings") {
		t.Errorf("table created in %s is missing there", urlA)
	}
	if hasTable(t, b, "recordings") {
		t.Errorf("table created in %s is visible in %s", urlA, urlB)
	}
}

func TestDropDatabaseDisconnectsSessions(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	admin := c.URL("postgres")
	name, err := CreateDatabase(t.Context(), admin)
	if err != nil {
		t.Fatal(err)
	}
	// A session left open, as by a pool nobody closed, must not keep the
	// database alive.
	connect(t, c.URL(name))

	for i := range 2 { // the second call finds nothing to drop
		if err := DropDatabase(t.Context(), admin, name); err != nil {
			t.Fatalf("DropDatabase call %d: %v", i, err)
		}
	}
	var exists bool
	if err := connect(t, admin).QueryRow(t.Context(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after DropDatabase", name)
	}
}

func TestStopIsIdempotentAndRemovesDir(t *testing.T) {
	t.Parallel()
	c, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Stop() })
	}
	wg.Wait()
	errs = append(errs, c.Stop())
	for i, err := range errs {
		if err != nil {
			t.Errorf("Stop call %d: %v", i, err)
		}
	}

	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster directory after Stop: got Stat error %v, want not exist", err)
	}
	if conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port))); err == nil {
		conn.Close()
		t.Errorf("port %d still accepts connections after Stop", c.port)
	}
	if c.reaper.ProcessState == nil {
		t.Error("reaper still running after Stop")
	}
}

func TestStartFailureReportsOutputAndRemovesDir(t *testing.T) {
	tests := []struct {
		name     string
		initdb   string // script body
		postgres string
		want     string
	}{
		{
			name:     "initdb fails",
			initdb:   "echo 'initdb: error: disk on fire' >&2; exit 1",
			postgres: "exit 0",
			want:     "disk on fire",
		},
		{
			name:     "postgres exits",
			initdb:   "exit 0",
			postgres: "echo 'FATAL:  shared memory on fire' >&2; exit 1",
			want:     "shared memory on fire",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// When the tests run as root, the scripts run as an unprivileged
			// user, who must be able to reach them and the cluster directory.
			bin, tmp := t.TempDir(), t.TempDir()
			for _, dir := range []string{filepath.Dir(bin), bin, filepath.Dir(tmp), tmp} {
				if err := os.Chmod(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for name, body := range map[string]string{"initdb": tt.initdb, "postgres": tt.postgres} {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("TMPDIR", tmp)

			c, err := startWith(t.Context(), bin)
			if err == nil {
				c.Stop()
				t.Fatal("Start succeeded with failing binaries")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error %q does not contain the output %q", err, tt.want)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("Start left %v behind in %s", left, tmp)
			}
		})
	}
}

func TestNotFoundErrorNamesPackage(t *testing.T) {
	empty := t.TempDir()
	_, err := findBinDir(empty, []string{filepath.Join(empty, "*", "bin")})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("findBinDir in an empty directory: got error %v, want *NotFoundError", err)
	}
	msg := nf.Error()
	for _, want := range []string{"apt-get install postgresql", empty} {
		if !strings.Contains(msg, want) {
			t.Errorf("NotFoundError message %q does not contain %q", msg, want)
		}
	}
}

func TestFindBinDirPrefersPathThenHighestVersion(t *testing.T) {
	root := t.TempDir()
	// install creates dir with an executable file for each of progs.
	install := func(dir string, progs ...string) string {
		dir = filepath.Join(root, dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range progs {
			if err := os.WriteFile(filepath.Join(dir, p), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	onPath := install("path", "initdb", "postgres")
	initdbOnly := install("initdb-only", "initdb")
	notExecutable := install("not-executable")
	if err := os.WriteFile(filepath.Join(notExecutable, "initdb"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notExecutable, "postgres"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"9.6", "10", "15", "9.10"} {
		install(filepath.Join("lib", v, "bin"), "initdb", "postgres")
	}
	install(filepath.Join("lib", "16", "bin"), "postgres")
	versions := filepath.Join(root, "lib", "*", "bin")

	tests := []struct {
		name     string
		pathList string
		roots    []string
		want     string
	}{
		{"path first", initdbOnly + ":" + onPath, []string{versions}, onPath},
		{"incomplete and non-executable path entries skipped", initdbOnly + ":" + notExecutable, []string{versions}, filepath.Join(root, "lib", "15", "bin")},
		{"relative path entries ignored", "path", []string{versions}, filepath.Join(root, "lib", "15", "bin")},
		{"later roots", "", []string{filepath.Join(root, "missing", "*"), onPath}, onPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(root)
			got, err := findBinDir(tt.pathList, tt.roots)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("findBinDir(%q, %q) = %s, want %s", tt.pathList, tt.roots, got, tt.want)
			}
		})
	}
}

func TestCompareVersionsIsNumeric(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"9.6", "10", -1},
		{"15", "9.6", 1},
		{"9.6", "9.10", -1},
		{"15", "15", 0},
		{"015", "15", 0},
		{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/9.6/bin", 1},
		{"15beta1", "15", 1},
		{"a", "b", -1},
	}
	for _, tt := range tests {
		got := compareVersions(tt.a, tt.b)
		if (got > 0) != (tt.want > 0) || (got < 0) != (tt.want < 0) {
			t.Errorf("compareVersions(%q, %q) = %d, want sign of %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// helperEnv tells a re-executed test binary to act as TestHelperProcess.
// Its value says how the helper should die.
const helperEnv = "AGENTVCR_PGCLUSTER_HELPER"

// TestHelperProcess is not a real test. TestClusterDiesWithProcess runs the
// test binary again to execute it in a process that starts a cluster and
// then dies without stopping it.
func TestHelperProcess(t *testing.T) {
	how := os.Getenv(helperEnv)
	if how == "" {
		return // not a test of its own: TestClusterDiesWithProcess runs it
	}
	c, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("cluster %d %s\n", c.port, c.dir)
	switch how {
	case "panic":
		panic("dying with the cluster running")
	case "exit":
		os.Exit(3)
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	t.Fatalf("unknown %s=%q", helperEnv, how)
}

func TestClusterDiesWithProcess(t *testing.T) {
	for _, how := range []string{"panic", "exit", "kill"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
			cmd.Env = append(os.Environ(), helperEnv+"="+how)
			// The helper is meant to die, so its exit status says nothing.
			out, _ := cmd.CombinedOutput()

			var port int
			var dir string
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if _, err := fmt.Sscanf(sc.Text(), "cluster %d %s", &port, &dir); err == nil {
					break
				}
			}
			if dir == "" {
				t.Fatalf("helper printed no cluster line:\n%s", out)
			}

			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			deadline := time.Now().Add(15 * time.Second)
			for {
				conn, dialErr := net.DialTimeout("tcp", addr, time.Second)
				if dialErr == nil {
					conn.Close()
				}
				_, statErr := os.Stat(dir)
				if dialErr != nil && errors.Is(statErr, os.ErrNotExist) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("15s after the helper died: %s accepts connections: %v; %s exists: %v",
						addr, dialErr == nil, dir, statErr == nil)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
