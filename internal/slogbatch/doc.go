// Package slogbatch formats a log's records on a goroutine of its own, so
// that the goroutine that logs (a proxy's request, before its response
// goes out) does not wait for its line to be formatted.
//
// A Handler queues each record below slog.LevelWarn and returns; its
// goroutine formats the queue, in order, with the handler it wraps. A
// warning or an error is formatted at once, after every record queued
// before it, and then the Handler's urgent function runs (a log that
// batches its output flushes it there), so that what a person debugging
// a run needs is out before the caller goes on. Memory is bounded: past
// 4,096 queued records a record is formatted at once. Close formats what
// is queued and stops.
package slogbatch
