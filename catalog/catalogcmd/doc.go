// Package catalogcmd is the command line of a program that declares a
// test catalog: a user's cmd/catalog/main.go calls Main with its
// *catalog.Catalog, and gets --list (each suite with its fingerprint and
// cells, --json for a script), and runs the cells --suite, --profile and
// --environment select as evals, with every flag of evals/evalcmd.
//
// The suites' Sources are read from the catalog's own fs.FS when it has
// one (an embed.FS the program carries); otherwise from the working
// directory, or --sources DIR: run the program from the module's root,
// as recorder catalog ./cmd/catalog does.
package catalogcmd

//go:generate go test -run TestTheCLIReferenceIsCurrent -update
