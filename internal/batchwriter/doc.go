// Package batchwriter writes what it is given to another writer from a
// goroutine of its own, so that a writer of a busy log never waits on a
// slow or busy file descriptor, and lines that arrive while one write is
// in progress go out together in the next.
//
// A Write wakes the goroutine, which waits 5 ms for more before it
// writes, so that a busy log costs one write per 5 ms rather than one per
// line, and no line is later than that; Close writes what is pending at
// once. Memory is bounded: a Write waits while 256 KB are pending, as a
// write to a full pipe waits.
package batchwriter
