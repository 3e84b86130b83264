// Package evalcmd is the command line of a program that runs evals: a
// user's cmd/evals/main.go calls Main with its evals, and gets --list,
// --dry-run, --reps, --variant, --max-cost-usd and the rest, the exit
// codes of internal/cli's table, and a private PostgreSQL for the
// attempts' databases when --database-url is not given.
//
// It is apart from package evals so that a program that only runs evals
// (a test, a CI job of its own) links no command-line code; recorder
// eval builds and runs such a program.
package evalcmd

//go:generate go test -run TestTheCLIReferenceIsCurrent -update
