package bench

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/sanitize"
)

// corpusOf builds raw exports of Junior-shaped Slack conversations, each
// with its own people and channel, until they hold at least size bytes.
func corpusOf(tb testing.TB, size int) ([][]byte, int) {
	tb.Helper()
	docs, total, err := juniortest.Exports(size)
	if err != nil {
		tb.Fatal(err)
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
