package slogbatch

import (
	"context"
	"log/slog"
	"sync"
)

// maxQueued bounds the records a Handler holds unformatted.
const maxQueued = 4096

// Handler is a slog.Handler that formats records below slog.LevelWarn on
// a goroutine of its own. It is safe for concurrent use.
type Handler struct {
	inner slog.Handler
	q     *queue
}

// queue is what a Handler and those derived from it (WithAttrs,
// WithGroup) share: one order of records, one goroutine.
type queue struct {
	urgent func() error
	wake   chan struct{}
	done   chan struct{}

	// format is held while records are formatted, so that a batch the
	// goroutine took and a warning formatted at once keep their order.
	format sync.Mutex

	mu     sync.Mutex
	queued []entry
	spare  []entry // the array of the batch formatted last, for reuse
	closed bool
	err    error // the first error of a record formatted later
}

// entry is a queued record and the handler that formats it.
type entry struct {
	h slog.Handler
	r slog.Record
}

// New returns a Handler that formats with inner and calls urgent, if not
// nil, after each warning or error it formats. It starts a goroutine,
// which Close stops.
func New(inner slog.Handler, urgent func() error) *Handler {
	q := &queue{urgent: urgent, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return &Handler{inner: inner, q: q}
}

// Enabled reports whether the wrapped handler handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle queues r, or formats it at once when it is a warning or an
// error, when the queue is full, or after Close. Its error is the
// wrapped handler's for r, or the first one of a record formatted
// before, on the goroutine.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	q := h.q
	if r.Level < slog.LevelWarn {
		q.mu.Lock()
		if !q.closed && len(q.queued) < maxQueued {
			q.queued = append(q.queued, entry{h.inner, r.Clone()})
			// Under the lock, which Close takes to close wake.
			select {
			case q.wake <- struct{}{}:
			default: // the goroutine is woken already: it takes r too
			}
			err := q.err
			q.mu.Unlock()
			return err
		}
		q.mu.Unlock()
	}
	q.format.Lock()
	defer q.format.Unlock()
	err := q.formatQueued()
	if herr := h.inner.Handle(ctx, r); herr != nil {
		err = herr
	}
	if r.Level >= slog.LevelWarn && q.urgent != nil {
		if uerr := q.urgent(); uerr != nil && err == nil {
			err = uerr
		}
	}
	return err
}

// WithAttrs returns a Handler whose records carry attrs, in the same
// order as h's.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs), q: h.q}
}

// WithGroup returns a Handler whose attributes are in group name, in the
// same order as h's.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), q: h.q}
}

// Close formats what is queued and stops the goroutine. A record handled
// after Close is formatted at once. Its error is the first of a record
// formatted on the goroutine.
func (h *Handler) Close() error {
	q := h.q
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.wake)
	}
	q.mu.Unlock()
	<-q.done
	q.format.Lock()
	defer q.format.Unlock()
	return q.formatQueued()
}

func (q *queue) run() {
	defer close(q.done)
	for range q.wake {
		q.format.Lock()
		q.formatQueued()
		q.format.Unlock()
	}
}

// formatQueued formats the queued records, in order, and returns the
// first error of one formatted on the goroutine so far. q.format is
// held.
func (q *queue) formatQueued() error {
	q.mu.Lock()
	batch := q.queued
	q.queued, q.spare = q.spare[:0], nil
	q.mu.Unlock()
	var first error
	for _, e := range batch {
		if err := e.h.Handle(context.Background(), e.r); err != nil && first == nil {
			first = err
		}
	}
	clear(batch) // the records go
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spare = batch[:0]
	if q.err == nil {
		q.err = first
	}
	return q.err
}
