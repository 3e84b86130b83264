package slogbatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is a writer that keeps what it is given, and can be stopped: a
// write then waits until it is let go.
type lines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	gate    chan struct{} // when not nil, a write waits for it to close
	blocked chan struct{} // told once a write waits at the gate
	err     error
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	gate, blocked := l.gate, l.blocked
	l.mu.Unlock()
	if gate != nil {
		select {
		case blocked <- struct{}{}:
		default:
		}
		<-gate
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	return l.buf.Write(p)
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// stop makes writes wait until the returned function is called.
func (l *lines) stop() (blocked <-chan struct{}, release func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gate, l.blocked = make(chan struct{}), make(chan struct{}, 1)
	gate := l.gate
	return l.blocked, func() {
		l.mu.Lock()
		l.gate = nil
		l.mu.Unlock()
		close(gate)
	}
}

func newLog(t *testing.T, urgent func() error) (*slog.Logger, *Handler, *lines) {
	t.Helper()
	out := &lines{}
	h := New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: noTime}), urgent)
	t.Cleanup(func() { h.Close() })
	return slog.New(h), h, out
}

func noTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

func TestLinesKeepTheirOrderAcrossGoroutines(t *testing.T) {
	log, h, out := newLog(t, nil)
	const writers, each = 8, 1000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				log.Info("exchange", "writer", w, "n", i)
			}
		})
	}
	wg.Wait()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.text(), "\n"), "\n")
	if len(got) != writers*each {
		t.Fatalf("%d lines; want %d", len(got), writers*each)
	}
	for _, l := range got {
		var w, n int
		if _, err := fmt.Sscanf(l, "level=INFO msg=exchange writer=%d n=%d", &w, &n); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if n != next[w] {
			t.Fatalf("writer %d: line %d after %d", w, n, next[w]-1)
		}
		next[w]++
	}
}

func TestInfoDoesNotWaitForItsLine(t *testing.T) {
	log, h, out := newLog(t, nil)
	blocked, release := out.stop()
	log.Info("first")
	<-blocked // the goroutine formats it, and waits on the writer
	done := make(chan struct{})
	go func() {
		log.Info("second") // queued while the writer waits
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("an info record waited for the writer")
	}
	release()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.text(), "level=INFO msg=first\nlevel=INFO msg=second\n"; got != want {
		t.Fatalf("wrote %q; want %q", got, want)
	}
}

func TestAWarningIsOutBeforeHandleReturns(t *testing.T) {
	var at []string
	var out *lines
	log, _, out := newLog(t, func() error { at = append(at, out.text()); return nil })
	for i := range 100 {
		log.Info("exchange", "n", i)
	}
	log.Warn("missed")
	var want strings.Builder
	for i := range 100 {
		fmt.Fprintf(&want, "level=INFO msg=exchange n=%d\n", i)
	}
	want.WriteString("level=WARN msg=missed\n")
	if got := out.text(); got != want.String() {
		t.Fatalf("after Warn returned: %q; want every line before it, then it", got)
	}
	if len(at) != 1 || at[0] != want.String() {
		t.Fatalf("urgent ran %d times, the first with %q written", len(at), at)
	}
}

func TestAFullQueueFormatsAtOnce(t *testing.T) {
	log, h, out := newLog(t, nil)
	blocked, release := out.stop()
	log.Info("first")
	<-blocked // the goroutine holds its batch at the writer
	for range maxQueued {
		log.Info("queued")
	}
	h.q.mu.Lock()
	n := len(h.q.queued)
	h.q.mu.Unlock()
	if n != maxQueued {
		t.Fatalf("%d records queued; want %d", n, maxQueued)
	}
	returned := make(chan struct{})
	go func() {
		log.Info("past the bound") // formatted by the caller, after the rest
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("a record past the bound was queued")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	<-returned
	got := strings.Split(strings.TrimSuffix(out.text(), "\n"), "\n")
	if len(got) != maxQueued+2 || got[0] != "level=INFO msg=first" || got[len(got)-1] != "level=INFO msg=\"past the bound\"" {
		t.Fatalf("%d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestAttrsAndGroupsKeepTheOrder(t *testing.T) {
	log, h, out := newLog(t, nil)
	log.Info("one")
	log.With("rule", "model").Info("two")
	log.WithGroup("req").Info("three", "id", 3)
	log.Info("four")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	want := "level=INFO msg=one\nlevel=INFO msg=two rule=model\nlevel=INFO msg=three req.id=3\nlevel=INFO msg=four\n"
	if got := out.text(); got != want {
		t.Fatalf("wrote %q; want %q", got, want)
	}
}

func TestAnErrorOfTheWriterIsReported(t *testing.T) {
	log, h, out := newLog(t, nil)
	broken := errors.New("disk full")
	out.mu.Lock()
	out.err = broken
	out.mu.Unlock()
	log.Info("lost")
	if err := h.Close(); !errors.Is(err, broken) {
		t.Fatalf("Close: %v; want %v", err, broken)
	}
	if err := h.Handle(context.Background(), slog.NewRecord(time.Now(), slog.LevelInfo, "after", 0)); !errors.Is(err, broken) {
		t.Fatalf("Handle after a failed write: %v; want %v", err, broken)
	}
}

func TestAfterCloseARecordIsFormattedAtOnce(t *testing.T) {
	log, h, out := newLog(t, nil)
	log.Info("before")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	log.Info("after")
	if got, want := out.text(), "level=INFO msg=before\nlevel=INFO msg=after\n"; got != want {
		t.Fatalf("wrote %q; want %q", got, want)
	}
}

// TestHandleWhileClosing logs from many goroutines while the handler
// closes, as a proxy that stops still answers keep-alive clients: no
// record may be lost, and nothing may panic.
func TestHandleWhileClosing(t *testing.T) {
	for range 100 {
		out := &lines{}
		h := New(slog.NewTextHandler(out, &slog.HandlerOptions{ReplaceAttr: noTime}), nil)
		log := slog.New(h)
		var wg sync.WaitGroup
		var sent sync.WaitGroup
		const writers, each = 16, 50
		sent.Add(writers)
		for range writers {
			wg.Go(func() {
				for i := range each {
					log.Info("exchange")
					if i == 0 {
						sent.Done()
					}
				}
			})
		}
		sent.Wait() // every writer is under way
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if n := strings.Count(out.text(), "msg=exchange"); n != writers*each {
			t.Fatalf("%d lines; want %d", n, writers*each)
		}
	}
}
