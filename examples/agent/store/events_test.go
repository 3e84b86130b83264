package store_test

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// Automated inputs counted at once each get their own number; a
// person's message starts the count again, and an automated message
// does not.
func TestCountAutomatedCountsSinceAPersonsMessage(t *testing.T) {
	ctx := t.Context()
	st := open(t)
	const id = "local:web:watched"
	automated := []string{"scheduler", "event"}
	message := func(key, source string) store.Row {
		return store.Row{Type: "message", Key: key, Payload: map[string]any{"role": "user", "text": key, "meta": map[string]any{"source": source}}}
	}
	if _, err := st.Create(ctx, store.Conversation{ID: id, Source: "web", SourceJS: json.RawMessage(`{}`)}, message("first", "web")); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, 8)
	var wg sync.WaitGroup
	for i := range counts {
		wg.Go(func() {
			n, err := st.CountAutomated(ctx, id, automated)
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	slices.Sort(counts)
	if !slices.Equal(counts, []int{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("eight at once counted %v", counts)
	}
	for _, step := range []struct {
		row  store.Row
		want int
	}{
		{message("an event", "event"), 9},
		{message("a person", "slack"), 1},
		{message("a heartbeat", "scheduler"), 2},
		{message("no source", ""), 1},
	} {
		if _, err := st.Append(ctx, id, step.row); err != nil {
			t.Fatal(err)
		}
		if n, err := st.CountAutomated(ctx, id, automated); err != nil || n != step.want {
			t.Fatalf("after %s: %d, %v; want %d", step.row.Key, n, err, step.want)
		}
	}
}
