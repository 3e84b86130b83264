package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/internal/pgcluster"
)

// envURL names the environment variable that points the tests at an
// existing server, for machines where the server binaries are missing.
const envURL = "AGENTVCR_TEST_DATABASE_URL"

// shared is the cluster that NewDatabase starts for the whole test binary,
// on first use so that binaries whose tests need no database pay nothing.
var shared struct {
	once    sync.Once
	cluster *pgcluster.Cluster
	err     error
}

// Connect opens a connection to url that is closed at the end of the
// test.
func Connect(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
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
	name, err := pgcluster.CreateDatabase(t.Context(), admin.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := pgcluster.DropDatabase(ctx, admin.String(), name); err != nil {
			t.Error(err)
		}
	})
	u := *admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// Database is NewDatabase for an Example, which has no testing.TB: it
// returns the URL of a new, empty database and a func that drops it.
func Database(ctx context.Context) (string, func() error, error) {
	admin, err := adminURL()
	if err != nil {
		return "", nil, err
	}
	return databaseOn(ctx, admin)
}

// Server returns the URL of the test server's maintenance database, for
// code that makes its own databases on it (DatabaseOn, the fixture
// service's Options.DatabaseServer), starting the shared cluster if
// needed.
func Server() (string, error) {
	admin, err := adminURL()
	if err != nil {
		return "", err
	}
	return admin.String(), nil
}

// DatabaseOn is Database on the server at adminURL (a postgres:// URL of
// a user allowed to create databases) instead of the test server; ""
// is the test server.
func DatabaseOn(ctx context.Context, adminURL string) (string, func() error, error) {
	if adminURL == "" {
		return Database(ctx)
	}
	admin, err := url.Parse(adminURL)
	if err != nil || (admin.Scheme != "postgres" && admin.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("pgtest: want a postgres:// URL of the server to make databases on, got %q", redacted(adminURL))
	}
	return databaseOn(ctx, admin)
}

func databaseOn(ctx context.Context, admin *url.URL) (string, func() error, error) {
	name, err := pgcluster.CreateDatabase(ctx, admin.String())
	if err != nil {
		return "", nil, err
	}
	u := *admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), func() error { return pgcluster.DropDatabase(context.WithoutCancel(ctx), admin.String(), name) }, nil
}

// redacted is a URL without its password, for messages.
func redacted(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
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
		shared.cluster, shared.err = pgcluster.Start(context.Background())
		// The hint is added here rather than by pgcluster because only
		// tests read the variable.
		if _, ok := errors.AsType[*pgcluster.NotFoundError](shared.err); ok {
			shared.err = fmt.Errorf("%w; or set %s to the URL of a server to use instead", shared.err, envURL)
		}
	})
	if shared.err != nil {
		return nil, shared.err
	}
	return url.Parse(shared.cluster.URL("postgres"))
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
