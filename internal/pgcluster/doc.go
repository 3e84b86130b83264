// Package pgcluster runs throwaway PostgreSQL servers, for tests and demos.
//
// [Start] creates a private cluster in a temporary directory, tuned for
// speed rather than durability (no fsync, no synchronous commit, no
// full-page writes), because the data is thrown away anyway.
// [Cluster.CreateDatabase] gives each user of a cluster its own empty
// database. [CreateDatabase] and [DropDatabase] do the same on any server,
// for callers that are pointed at an existing one instead. Tests use this
// package through internal/pgtest, which shares one cluster per test
// binary.
//
// The server binaries (initdb and postgres) are looked up on $PATH and in
// the places where Debian's "postgresql" package and source installs put
// them. Where they are missing, [Start] returns a [*NotFoundError].
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
package pgcluster
