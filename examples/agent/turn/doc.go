// Package turn runs the reference agent's turns: a mailbox per
// conversation whose worker takes every pending input as one turn, the
// turn itself (a router call, the agent loop with its tools, compaction
// when the history outgrows the context window), and the ways a turn
// waits: paused past its slice, parked for an authorization, held by a
// test, stopped by a "stop" message. Every row a turn writes goes through
// the store, and a row that cannot be stored fails the turn
// (persistence_failed) with a reply that says so, as Junior's turns do.
package turn
