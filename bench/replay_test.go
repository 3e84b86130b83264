package bench

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// chatBody is a 50 KB model request: a long conversation, then the turn
// that tells it apart from the others, at the end, as real ones are.
func chatBody(turn int) string {
	var b strings.Builder
	b.WriteString(`{"model":"claude","stream":true,"messages":[`)
	for b.Len() < 50<<10 {
		b.WriteString(`{"role":"user","content":"Summarize the incident timeline so far and list the open actions, please."},`)
	}
	fmt.Fprintf(&b, `{"role":"user","content":"turn %d"}]}`, turn)
	return b.String()
}

const chatURL = "https://api.anthropic.com/v1/messages"

// BenchmarkReplayLookup measures finding the recording of a request among
// 10 and among 10,000 interactions with 50 KB bodies: agentvcr's keyed
// index (canonical key, then one map lookup) and go-vcr's own matcher
// (a scan of the interactions, here comparing method, URL and body, as a
// replay of model traffic must). It reports each one's time per lookup
// and the ratio of 10,000 to 10 (target <= 1.5 for agentvcr).
func BenchmarkReplayLookup(b *testing.B) {
	m := &cassette.Matcher{}
	type setup struct {
		index  *cassette.Index
		theirs *vcr.Cassette
		probe  cassette.Request
		body   string
	}
	build := func(n int) setup {
		s := setup{index: cassette.NewIndex(), theirs: vcr.New("bench")}
		for i := 0; i < n; i++ {
			body := chatBody(i)
			r := cassette.Request{Method: "POST", URL: chatURL, Body: body, Headers: http.Header{}}
			s.index.Add(m, &cassette.Interaction{ID: i, Request: r})
			s.theirs.AddInteraction(&vcr.Interaction{ID: i, Request: vcr.Request{Method: "POST", URL: chatURL, Body: body}})
		}
		s.body = chatBody(n / 2)
		s.probe = cassette.Request{Method: "POST", URL: chatURL, Body: s.body, Headers: http.Header{}}
		s.theirs.Matcher = func(r *http.Request, i vcr.Request) bool {
			return r.Method == i.Method && r.URL.String() == i.URL && s.body == i.Body
		}
		s.theirs.ReplayableInteractions = true
		return s
	}
	small, large := build(10), build(10000)
	ours := func(s setup) time.Duration {
		start := time.Now()
		key := m.Key(&s.probe)
		if _, ok, err := s.index.Next(key); !ok || err != nil {
			b.Fatal("no recording found", err)
		}
		return time.Since(start)
	}
	theirs := func(s setup) time.Duration {
		r, _ := http.NewRequest("POST", chatURL, io.NopCloser(strings.NewReader(s.body)))
		start := time.Now()
		if _, err := s.theirs.GetInteraction(r); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var oursSmall, oursLarge, theirsSmall, theirsLarge time.Duration
	b.ResetTimer()
	for range b.N {
		oursSmall += ours(small)
		oursLarge += ours(large)
		theirsSmall += theirs(small)
		theirsLarge += theirs(large)
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(oursSmall), "agentvcr-10-µs")
	b.ReportMetric(per(oursLarge), "agentvcr-10k-µs")
	b.ReportMetric(oursLarge.Seconds()/oursSmall.Seconds(), "agentvcr-ratio")
	b.ReportMetric(per(theirsSmall), "govcr-10-µs")
	b.ReportMetric(per(theirsLarge), "govcr-10k-µs")
	b.ReportMetric(theirsLarge.Seconds()/theirsSmall.Seconds(), "govcr-ratio")
	b.ReportMetric(0, "ns/op")
}
