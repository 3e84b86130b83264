package sanitize

import (
	"fmt"
	"testing"

	"github.com/agentvcr/agentvcr/internal/juniortest"
)

// benchDocs builds Junior-shaped Slack exports (bench's corpus) until
// they hold size bytes.
func benchDocs(tb testing.TB, size int) [][]byte {
	tb.Helper()
	docs, _, err := juniortest.Exports(size)
	if err != nil {
		tb.Fatal(err)
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
