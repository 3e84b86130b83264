// Package pgtest runs throwaway PostgreSQL servers for tests and demos.
//
// Tests run against a real server instead of a fake, so SQL behaves as it
// does in production. [Start] creates a private cluster in a temporary
// directory, tuned for speed rather than durability (no fsync, no
// synchronous commit, no full-page writes), because the data is thrown away
// anyway. [NewDatabase] gives each test its own empty database on one
// cluster shared by the test binary, which is much cheaper than a cluster
// per test.
//
// The server binaries (initdb and postgres) are looked up on $PATH and in
// the places where Debian's "postgresql" package and source installs put
// them. Where they are missing, tests can set AGENTVCR_TEST_DATABASE_URL to
// the URL of an existing server, and [NewDatabase] creates its databases
// there instead.
//
// A cluster must not outlive the process that started it, even when that
// process panics or is killed with SIGKILL and cannot call [Cluster.Stop].
// Each cluster therefore has a small reaper process that waits for the end
// of a pipe only the starting process holds open; when that process exits,
// the reaper stops the server and removes its directory.
//
// PostgreSQL refuses to run as root. When the calling process is root, the
// server runs as the "postgres" user, or as "nobody" if that does not
// exist.
package pgtest
