package batchwriter

import (
	"io"
	"sync"
	"time"
)

// maxPending is how many bytes may wait to be written before Write waits.
const maxPending = 256 << 10

// Writer batches writes to an underlying io.Writer. Its methods are safe
// for concurrent use. Each Write's bytes reach the underlying writer
// whole and in the order of the Writes, so a line written in one Write
// (as log/slog's handlers write a record) is never split by another.
type Writer struct {
	w       io.Writer
	wake    chan struct{} // a write is pending; closed by Close
	closing chan struct{} // closed by Close: no more lingering
	done    chan struct{} // closed when the goroutine has written all

	mu      sync.Mutex
	taken   sync.Cond // signalled when the goroutine takes what is pending
	pending []byte
	closed  bool
	err     error // the underlying writer's first error
}

// New returns a Writer that writes to w, and starts its goroutine. Close
// it to write what is pending and stop the goroutine.
func New(w io.Writer) *Writer {
	b := &Writer{w: w, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	b.taken.L = &b.mu
	go b.run()
	return b
}

// Write queues p to be written and returns at once, unless 256 KB are
// already pending. The error is the underlying writer's, from an earlier
// write. After Close, Write writes p itself.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.pending) >= maxPending && b.err == nil && !b.closed {
		b.taken.Wait()
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.closed {
		// After what the goroutine writes, in order.
		b.mu.Unlock()
		<-b.done
		b.mu.Lock()
		return b.w.Write(p)
	}
	b.pending = append(b.pending, p...)
	select {
	case b.wake <- struct{}{}:
	default: // a wake is already pending: it takes p too
	}
	return len(p), nil
}

// linger is how long the goroutine, woken by a write, waits for more
// before it writes: a busy log is written in one write per linger, not
// one per line, and no line is later than this.
const linger = 5 * time.Millisecond

// run writes what is pending each time a Write wakes it, until Close.
func (b *Writer) run() {
	defer close(b.done)
	var batch []byte
	t := time.NewTimer(linger)
	for range b.wake {
		t.Reset(linger)
		select {
		case <-t.C:
		case <-b.closing:
			t.Stop()
		}
		b.mu.Lock()
		batch, b.pending = b.pending, batch[:0]
		b.taken.Broadcast()
		b.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		if _, err := b.w.Write(batch); err != nil {
			b.mu.Lock()
			if b.err == nil {
				b.err = err
			}
			b.taken.Broadcast()
			b.mu.Unlock()
		}
	}
}

// Close writes what is pending, and returns the underlying writer's first
// error. It does not close the underlying writer.
func (b *Writer) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.closing)
		close(b.wake)
		b.taken.Broadcast()
	}
	b.mu.Unlock()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
