// Package batchwriter writes what it is given to another writer from a
// goroutine of its own, so that a writer of a busy log never waits on a
// slow or busy file descriptor, and lines that arrive close together go
// out in one write.
//
// A Write wakes the goroutine, which waits up to 50 ms for more before it
// writes: a busy log costs one write per 50 ms rather than one per line.
// Flush writes what is pending at once and waits for it (a log calls it
// after a warning, which should not wait), and Close writes what is
// pending and stops. Memory is bounded: a Write waits while 1 MB is
// pending, as a write to a full pipe waits.
package batchwriter
