package sanitize

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
)

// benchDocs builds Junior-shaped Slack exports (the shape of bench's
// corpus) until they hold size bytes.
func benchDocs(tb testing.TB, size int) [][]byte {
	tb.Helper()
	var docs [][]byte
	names := []string{"Ada Quill", "Bo Rivet", "Cy Ledger", "Dee Marsh", "Eli Stone", "Fay North", "Gus Vale", "Hal Brook"}
	for i, total := 0, 0; total < size; i++ {
		b := juniortest.Slack(fmt.Sprintf("C0BENCH%03d", i%1000), fmt.Sprintf("17900%05d.000100", i))
		a := b.SlackPerson(2*i+1, "T0AGENTVCR", fmt.Sprintf("U0%08X", uint32(i)*2654435761), names[i%len(names)])
		c := b.SlackPerson(2*i+2, "T0AGENTVCR", fmt.Sprintf("U1%08X", uint32(i)*2246822519), names[(i+3)%len(names)])
		for turn := 0; turn < 40; turn++ {
			who := a
			if turn%3 == 2 {
				who = c
			}
			b.Turn(who, fmt.Sprintf("Step %d: %s, check https://acme.slack.com/archives/C0BENCH%03d and mail %s", turn,
				*c.DisplayName, i%1000, *c.Email), "Done: timeline summarized, three actions open.",
				juniortest.Tool{Name: "webFetch", Args: map[string]any{"url": "https://example.com/incident"},
					Result: "Incident timeline: 14:02 deploy, 14:05 alerts, 14:09 rollback, 14:30 all clear."})
		}
		conv := b.Conversation()
		rec := &history.Recording{Header: history.Header{Version: 1, Surface: conv.Surface,
			Exporter: &history.Exporter{Tool: "agentvcr", ConversationID: conv.ID}, Identities: conv.Identities}}
		for _, e := range conv.Events {
			if !juniortest.Uncopied(e.Type) {
				rec.Events = append(rec.Events, e)
			}
		}
		var buf bytes.Buffer
		if err := history.Write(&buf, rec); err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, buf.Bytes())
		total += buf.Len()
	}
	return docs
}

// BenchmarkVerify measures the leak check alone on what Sanitize wrote,
// as a run does: built and filled once for all the documents.
func BenchmarkVerify(b *testing.B) {
	docs := benchDocs(b, 8<<20)
	s, err := New(Options{Key: testKey})
	if err != nil {
		b.Fatal(err)
	}
	var outs [][]byte
	total := 0
	for i, doc := range docs {
		out, err := s.Sanitize(doc, fmt.Sprint(i))
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, out)
		total += len(doc)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for range b.N {
		// A new leak check, as each run has: nothing remembered.
		s.leak = nil
		for i, out := range outs {
			if hits := s.verify(asString(docs[i]), out); len(hits) > 0 {
				b.Fatal(hits)
			}
		}
	}
}

// BenchmarkReadable measures package history's Reader over every row, as
// learning reads a document.
func BenchmarkReadable(b *testing.B) {
	docs := benchDocs(b, 8<<20)
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	b.SetBytes(int64(total))
	b.ResetTimer()
	for range b.N {
		for _, doc := range docs {
			if err := readable(doc, "x"); err != nil {
				b.Fatal(err)
			}
		}
	}
}
