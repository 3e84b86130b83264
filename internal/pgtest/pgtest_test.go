package pgtest

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

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

func TestNewDatabaseIsEmptyAndDroppedAtCleanup(t *testing.T) {
	var urls []string
	t.Run("use", func(t *testing.T) {
		for range 2 {
			u := NewDatabase(t)
			conn := Connect(t, u)
			if hasTable(t, conn, "recordings") {
				t.Errorf("new database %s already has table recordings", u)
			}
			if _, err := conn.Exec(t.Context(), "CREATE TABLE recordings (id int)"); err != nil {
				t.Fatal(err)
			}
			urls = append(urls, u)
		}
	})
	if len(urls) != 2 || urls[0] == urls[1] {
		t.Fatalf("NewDatabase returned %q, want two different URLs", urls)
	}

	admin, err := adminURL()
	if err != nil {
		t.Fatal(err)
	}
	conn := Connect(t, admin.String())
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if u.Host != admin.Host || u.User.String() != admin.User.String() || u.RawQuery != admin.RawQuery {
			t.Errorf("NewDatabase URL %s differs from %s in more than the database name", s, admin)
		}
		name := strings.TrimPrefix(u.Path, "/")
		if !strings.HasPrefix(name, "agentvcr_") {
			t.Errorf("database name %q lacks prefix agentvcr_", name)
		}
		var exists bool
		if err := conn.QueryRow(t.Context(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if exists {
			t.Errorf("database %s still exists after the test that created it", name)
		}
	}
}
