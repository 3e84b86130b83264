package vet_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentvcr/agentvcr/vet"
)

// The sample app under testdata/app has one package of agent tests that
// breaks each rule (imports, modelfakes, internals, and agent, an agent
// test compiled into the app's package), one that keeps them all
// (clean), and one of tests that are not agent tests (notagent). Its
// test support, bottest, is declared public with the analyzer's flag, as
// go vet -vettool passes it.
func TestTheAnalyzerFindsEachRulesOffences(t *testing.T) {
	a := vet.NewAnalyzer()
	if err := a.Flags.Set("public", "example.com/bot/bottest"); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, filepath.Join(analysistest.TestData(), "app"), a, "./...")
}
