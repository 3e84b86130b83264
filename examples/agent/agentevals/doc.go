// Package agentevals is the reference agent's evals: ten questions with
// one right answer each, asked in Slack and on the web, each graded from
// what the agent left behind, not from its transcript: the reply it
// posted in the Slack thread (the Slack mock) or stored for a web
// conversation (the database), that it stored one reply, and how many
// tool results it stored.
//
// Its program, examples/agent/cmd/evals, runs them with the real model
// (recorder eval ./examples/agent/cmd/evals); a user's program runs its
// own the same way, with evalcmd.Main.
package agentevals
