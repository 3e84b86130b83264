package vet_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/vet"
)

// This repository's agent tests, the reference agent's, keep to the
// committed ratchet (agentvcr-vet.json at the module's root): no offence
// it does not list, and none it lists that is fixed. A new offender
// fails here until it is fixed; a fix fails here until
// go run ./cmd/recorder vet --prune ./examples/agent/... drops it.
func TestThisRepositorysAgentTestsKeepToTheRatchet(t *testing.T) {
	root := ".."
	r, err := vet.ReadRatchet(filepath.Join(root, vet.RatchetFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := vet.Run(context.Background(), root, r.Public, "./examples/agent/...")
	if err != nil {
		t.Fatal(err)
	}
	added, fixed := r.Compare(rep)
	for _, c := range added {
		for _, f := range c.Findings {
			t.Errorf("%s (new: the ratchet lists %d, found %d)", f, c.Listed, c.Found)
		}
	}
	for _, c := range fixed {
		t.Errorf("%s: %s %s: fixed, still listed (the ratchet lists %d, found %d): go run ./cmd/recorder vet --prune ./examples/agent/... drops it",
			c.File, c.Rule, c.What, c.Listed, c.Found)
	}
	if len(rep.AgentTests) < 15 {
		t.Errorf("vetted %d agent tests: %q; want those of examples/agent's app, store, fixturetest, agentevals and agentcatalog", len(rep.AgentTests), rep.AgentTests)
	}
}
