// Package evals runs an agent against the real model over a set of cases
// and scores it honestly, so that a change to its instructions or tools
// can be compared with a baseline.
//
// An Eval names an app (a fixture.App: each attempt gets a fresh one, with
// its own database, proxy and Slack mock), cases from a JSONL file, what
// to send, and a Grade that reads the end state the agent's tools left
// behind (the Slack mock, the database, the app's routes), not its
// transcript. Run runs every case Reps times for the baseline and each
// variant asked for, Concurrency at a time, and writes under
// <out>/<eval>/<variant>/ a row per attempt, a trace per attempt, the
// failures and a summary: each metric's mean with a confidence interval
// over the repetitions, and what it cost.
//
// What a caller must know: the numbers are kept honest before they are
// kept complete. An answer that ended at a token limit is kept out of
// every mean and counted beside it; an attempt that produced nothing
// scorable (a provider error, a timeout, a grader error) goes to
// failures.jsonl with its class; a model without a price has no cost,
// never zero, and a cost ceiling that cannot be held says so and starts
// no more cases. Package evals/evalcmd gives a program the command line;
// go test never runs an eval.
package evals
