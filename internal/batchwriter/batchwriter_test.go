package batchwriter_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/batchwriter"
)

// TestEveryLineWholeAndInOrder writes lines from many goroutines at once
// through a pipe, as the proxy's log does to stderr, and reads them at
// the other end: each line whole, each goroutine's in its order, none
// lost once Close returns.
func TestEveryLineWholeAndInOrder(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []string)
	go func() {
		var lines []string
		s := bufio.NewScanner(r)
		for s.Scan() {
			lines = append(lines, s.Text())
		}
		read <- lines
	}()
	b := batchwriter.New(w)
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				// A line longer than a pipe's atomic write, so that a
				// split line would show.
				fmt.Fprintf(b, "writer=%d line=%d %s\n", g, i, strings.Repeat("x", 5000))
			}
		})
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := <-read
	if len(lines) != writers*each {
		t.Fatalf("read %d lines; wrote %d", len(lines), writers*each)
	}
	next := make([]int, writers)
	for _, line := range lines {
		var g, i int
		var rest string
		if _, err := fmt.Sscanf(line, "writer=%d line=%d %s", &g, &i, &rest); err != nil || len(rest) != 5000 {
			t.Fatalf("line %.60q... is not a whole line: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d's line %d came where its line %d was due", g, i, next[g])
		}
		next[g]++
	}
}

// TestALineIsWrittenWithoutClose: a line reaches the underlying writer
// on its own, soon, as a person tailing the log expects.
func TestALineIsWrittenWithoutClose(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	b := batchwriter.New(w)
	defer b.Close()
	start := time.Now()
	io.WriteString(b, "exchange status=200\n")
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "exchange status=200\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	t.Logf("the line came after %v", time.Since(start))
}

// blocked is a writer that takes nothing until it is let go, as a pipe
// that no one reads.
type blocked struct {
	let   chan struct{}
	mu    sync.Mutex
	wrote int
}

func (w *blocked) Write(p []byte) (int, error) {
	<-w.let
	w.mu.Lock()
	w.wrote += len(p)
	w.mu.Unlock()
	return len(p), nil
}

// TestAStuckWriterHoldsWritesBack: while the underlying writer takes
// nothing, a Write waits once 1 MB is pending (beside the batch the
// writer is stuck on), rather than the log growing without bound; once
// it takes again, all is written.
func TestAStuckWriterHoldsWritesBack(t *testing.T) {
	w := &blocked{let: make(chan struct{})}
	b := batchwriter.New(w)
	line := []byte(strings.Repeat("y", 1023) + "\n")
	const lines = 8192 // 8 MB
	wrote := make(chan int)
	go func() {
		n := 0
		for range lines {
			b.Write(line)
			n++
			select {
			case wrote <- n:
			default:
			}
		}
		close(wrote)
	}()
	// The writer is stuck: the Writes stop well short of the 8 MB.
	var n int
	deadline := time.After(10 * time.Second)
	for stuck := false; !stuck; {
		select {
		case m, ok := <-wrote:
			if !ok {
				t.Fatal("all 8 MB were taken while the writer took nothing")
			}
			n = m
		case <-time.After(500 * time.Millisecond):
			stuck = true // no Write returned for 500 ms
		case <-deadline:
			t.Fatal("the Writes neither stopped nor ended in 10 s")
		}
	}
	if n*len(line) > 2<<20+len(line) {
		t.Fatalf("%d KB were taken while the writer took nothing; want 2 MB at most", n*len(line)>>10)
	}
	close(w.let)
	for range wrote {
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if w.wrote != lines*len(line) {
		t.Fatalf("wrote %d bytes; want %d", w.wrote, lines*len(line))
	}
}

// recording is a writer that keeps what it is given.
type recording struct {
	mu sync.Mutex
	sb strings.Builder
}

func (w *recording) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sb.Write(p)
}

func (w *recording) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sb.String()
}

// TestFlushWritesAtOnce: what was written before a Flush is with the
// underlying writer when Flush returns, as a warning must be before the
// proxy goes on.
func TestFlushWritesAtOnce(t *testing.T) {
	w := &recording{}
	b := batchwriter.New(w)
	defer b.Close()
	for i := range 100 {
		fmt.Fprintf(b, "exchange %d\n", i)
		if i%10 == 9 {
			fmt.Fprintf(b, "warning after %d\n", i)
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := w.String(); !strings.HasSuffix(got, fmt.Sprintf("exchange %d\nwarning after %d\n", i, i)) {
				t.Fatalf("after Flush, the writer has %q", got[max(0, len(got)-60):])
			}
		}
	}
	if err := b.Flush(); err != nil { // nothing pending: at once
		t.Fatal(err)
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestAWriteErrorIsSaid: the underlying writer's error comes back from a
// later Write and from Close.
func TestAWriteErrorIsSaid(t *testing.T) {
	b := batchwriter.New(failing{})
	io.WriteString(b, "one\n")
	if err := b.Close(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Close: %v; want disk full", err)
	}
	if _, err := io.WriteString(b, "two\n"); err == nil {
		t.Fatal("a Write after the error succeeded")
	}
}

// TestWriteAfterClose: a line written after Close is written at once,
// after what Close wrote.
func TestWriteAfterClose(t *testing.T) {
	var sb strings.Builder
	b := batchwriter.New(&sb)
	io.WriteString(b, "before\n")
	b.Close()
	io.WriteString(b, "after\n")
	if sb.String() != "before\nafter\n" {
		t.Fatalf("wrote %q", sb.String())
	}
}
