package batchwriter

import (
	"io"
	"sync"
	"time"
)

// maxPending is how many bytes may wait to be written before Write waits.
const maxPending = 1 << 20

// linger is how long the goroutine, woken by a write, waits for more
// before it writes: a busy log is written in one write per linger, not
// one per line, and no line waits longer than this unless the underlying
// writer is slow.
const linger = 50 * time.Millisecond

// Writer batches writes to an underlying io.Writer. Its methods are safe
// for concurrent use. Each Write's bytes reach the underlying writer
// whole and in the order of the Writes, so a line written in one Write
// (as log/slog's handlers write a record) is never split by another.
type Writer struct {
	w       io.Writer
	wake    chan struct{} // a write is pending; closed by Close
	hurry   chan struct{} // a Flush waits: write without lingering
	closing chan struct{} // closed by Close: no more lingering
	done    chan struct{} // closed when the goroutine has written all

	mu      sync.Mutex
	changed sync.Cond // signalled when the goroutine takes or writes a batch, or ends
	pending []byte
	queued  int64 // bytes given to Write
	written int64 // bytes the goroutine has written, or failed to
	closed  bool
	ended   bool  // the goroutine has ended
	err     error // the underlying writer's first error
}

// New returns a Writer that writes to w, and starts its goroutine. Close
// it to write what is pending and stop the goroutine.
func New(w io.Writer) *Writer {
	b := &Writer{w: w, wake: make(chan struct{}, 1), hurry: make(chan struct{}, 1),
		closing: make(chan struct{}), done: make(chan struct{})}
	b.changed.L = &b.mu
	go b.run()
	return b
}

// Write queues p to be written and returns at once, unless 1 MB is
// already pending. The error is the underlying writer's, from an earlier
// write. After Close, Write writes p itself.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.pending) >= maxPending && b.err == nil && !b.closed {
		b.changed.Wait()
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
	b.queued += int64(len(p))
	select {
	case b.wake <- struct{}{}:
	default: // a wake is already pending: it takes p too
	}
	return len(p), nil
}

// Flush writes what is pending now, without waiting for more, and
// returns once it is written, with the underlying writer's first error.
// A log calls it after a line that should not wait, such as a warning.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	want := b.queued
	if b.written < want {
		select {
		case b.hurry <- struct{}{}:
		default:
		}
	}
	for b.written < want && !b.ended {
		b.changed.Wait()
	}
	return b.err
}

// run writes what is pending each time a Write wakes it, once it has
// lingered for more, until Close.
func (b *Writer) run() {
	defer func() {
		b.mu.Lock()
		b.ended = true
		b.changed.Broadcast()
		b.mu.Unlock()
		close(b.done)
	}()
	var batch []byte
	t := time.NewTimer(linger)
	t.Stop()
	for range b.wake {
		t.Reset(linger)
		select {
		case <-t.C:
		case <-b.hurry:
			t.Stop()
		case <-b.closing:
			t.Stop()
		}
		b.mu.Lock()
		batch, b.pending = b.pending, batch[:0]
		b.changed.Broadcast()
		b.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		_, err := b.w.Write(batch)
		b.mu.Lock()
		if err != nil && b.err == nil {
			b.err = err
		}
		b.written += int64(len(batch))
		b.changed.Broadcast()
		b.mu.Unlock()
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
		b.changed.Broadcast()
	}
	b.mu.Unlock()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
