// Package pgtest gives tests their own empty PostgreSQL databases.
//
// It is the test-side wrapper around internal/pgcluster. Tests run against
// a real server instead of a fake, so SQL behaves as it does in production.
// [NewDatabase] gives each test its own empty database on one cluster
// shared by the test binary, which is much cheaper than a cluster per test,
// and [Main] stops that cluster when the tests are done.
//
// Where the server binaries are missing, tests can set
// AGENTVCR_TEST_DATABASE_URL to the URL of an existing server, and
// [NewDatabase] creates its databases there instead.
package pgtest
