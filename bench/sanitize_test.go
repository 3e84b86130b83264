package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/sanitize"
)

// corpusOf builds raw exports of Junior-shaped Slack conversations, each
// with its own people and channel, until they hold at least size bytes.
func corpusOf(tb testing.TB, size int) ([][]byte, int) {
	tb.Helper()
	var docs [][]byte
	total := 0
	names := []string{"Ada Quill", "Bo Rivet", "Cy Ledger", "Dee Marsh", "Eli Stone", "Fay North", "Gus Vale", "Hal Brook"}
	for i := 0; total < size; i++ {
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
	return docs, total
}

// BenchmarkSanitize sanitizes a corpus of at least 50 MB on one core, side
// by side with encoding/json decoding the same documents into any and
// encoding them again, and reports both throughputs and their ratio
// (target >= 0.5: the sanitizer decodes every string at every depth, and
// its leak check reads the output again with code of its own).
func BenchmarkSanitize(b *testing.B) {
	docs, total := corpusOf(b, 50<<20)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	key := []byte("bench-key-0123456789abcdef012345")
	var ours, base time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		s, err := sanitize.New(sanitize.Options{Key: key})
		if err != nil {
			b.Fatal(err)
		}
		for i, doc := range docs {
			if err := s.Learn(doc, fmt.Sprint(i)); err != nil {
				b.Fatal(err)
			}
		}
		for i, doc := range docs {
			if _, err := s.Sanitize(doc, fmt.Sprint(i)); err != nil {
				b.Fatal(err)
			}
		}
		ours += time.Since(start)

		start = time.Now()
		for _, doc := range docs {
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
		base += time.Since(start)
	}
	mb := float64(total) * float64(b.N) / (1 << 20)
	b.ReportMetric(mb/ours.Seconds(), "sanitize-MB/s")
	b.ReportMetric(mb/base.Seconds(), "json-MB/s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "ratio")
	b.ReportMetric(float64(total)/(1<<20), "corpus-MB")
	b.ReportMetric(0, "ns/op")
}
