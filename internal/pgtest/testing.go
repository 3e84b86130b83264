package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// envURL names the environment variable that points the tests at an
// existing server, for machines where the server binaries are missing.
const envURL = "AGENTVCR_TEST_DATABASE_URL"

// shared is the cluster that NewDatabase starts for the whole test binary,
// on first use so that binaries whose tests need no database pay nothing.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// NewDatabase returns the URL of a new, empty database for t, and drops the
// database when t and its subtests are done.
//
// If AGENTVCR_TEST_DATABASE_URL is set, the database is created on that
// server, and the returned URL differs from it only in the database name.
// Otherwise the database is created on a cluster that the test binary
// starts on first use and that is shared by all its tests; [Main] stops it.
// NewDatabase fails the test if neither is possible.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin, err := adminURL()
	if err != nil {
		t.Fatal(err)
	}
	name, err := createDatabase(t.Context(), admin.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := dropDatabase(ctx, admin.String(), name); err != nil {
			t.Error(err)
		}
	})
	u := *admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// adminURL returns the URL of a database on the server that NewDatabase
// should use, starting the shared cluster if needed.
func adminURL() (*url.URL, error) {
	if s := os.Getenv(envURL); s != "" {
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("pgtest: %s: %w", envURL, err)
		}
		if u.Scheme != "postgres" && u.Scheme != "postgresql" {
			return nil, fmt.Errorf("pgtest: %s: want a postgres:// URL, got %q", envURL, s)
		}
		return u, nil
	}
	shared.once.Do(func() {
		// Not the test's context: the cluster outlives the test that
		// happens to start it.
		shared.cluster, shared.err = Start(context.Background())
	})
	if shared.err != nil {
		return nil, shared.err
	}
	return url.Parse(shared.cluster.URL("postgres"))
}

func dropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	// FORCE disconnects sessions the test left open, such as those of a
	// pool it did not close.
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: dropping database %s: %w", name, err)
	}
	return nil
}

// Main runs the tests and then stops the cluster that NewDatabase started,
// if any. Packages that use NewDatabase call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Without it the server is still stopped, but only after the test binary
// has exited, and by the reaper, which does so less gracefully.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}
