package store

import (
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/schema"
)

// A fork leaves behind the event types Junior's fork leaves, as
// agentvcr's junior profile lists them for export and load.
func TestAForkLeavesWhatJuniorsLeaves(t *testing.T) {
	p, err := schema.Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Sorted(slices.Values(uncopied)), slices.Sorted(slices.Values(p.UncopiedTypes))) {
		t.Fatalf("a fork leaves %v; Junior's profile %v", uncopied, p.UncopiedTypes)
	}
}
