package vet_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/agentvcr/agentvcr/vet"
)

// Run vets the agent tests of the packages a pattern names; each finding
// names its rule, where it is and what it is about, and its message says
// what to use instead.
func ExampleRun() {
	dir := filepath.Join("testdata", "app")
	rep, err := vet.Run(context.Background(), dir, []string{"example.com/bot/bottest"}, "./internals")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range rep.Findings {
		fmt.Printf("%s:%d %s %s\n", f.File, f.Line, f.Rule, f.What)
	}
	// Output:
	// internals/internals_test.go:5 internals database/sql
	// internals/internals_test.go:9 internals github.com/agentvcr/agentvcr/loader
	// internals/internals_test.go:10 internals github.com/jackc/pgx/v5
	// internals/internals_test.go:17 internals (*fixture.Fixture).DatabaseURL
	// internals/internals_test.go:23 internals (*agent.Store).Count
}

// A ratchet lists today's offences; Compare says what is new and what
// was fixed but is still listed, either of which fails the vet.
func ExampleRatchet() {
	dir := filepath.Join("testdata", "app")
	r, err := vet.ReadRatchet(filepath.Join(dir, vet.RatchetFile))
	if err != nil {
		log.Fatal(err)
	}
	rep, err := vet.Run(context.Background(), dir, r.Public, "./...")
	if err != nil {
		log.Fatal(err)
	}
	added, fixed := r.Compare(rep)
	fmt.Printf("%d offences, %d new, %d fixed still listed\n", len(rep.Findings), len(added), len(fixed))
	// Output:
	// 21 offences, 0 new, 0 fixed still listed
}

// The analyzer in a vet tool of your own, for
// go vet -vettool=$(which agentvet) -agentvet.public=example.com/bot/bottest ./...
// (go vet runs it package by package, so it has no ratchet: recorder vet
// has).
func ExampleNewAnalyzer() {
	unitchecker.Main(vet.NewAnalyzer())
}
