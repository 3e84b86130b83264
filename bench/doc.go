// Package bench measures agentvcr against named baselines, side by side in
// one run on one server, and reports ratios: run with
//
//	go test ./bench -run '^$' -bench . -benchtime 3x
//
// BenchmarkExport and BenchmarkLoad move a 100,000-event conversation
// through the recorder binary and through psql's \copy of the same rows;
// the figure to quote is the ratio of rows per second (target >= 0.5). The
// export also reports its peak resident memory, at 10,000 and at 100,000
// events, to show that it stays flat in conversation length.
//
// BenchmarkReplayThroughput runs a model gateway's load directly and
// through the replaying proxy, its server side in a child process pinned
// to one core; BenchmarkKey and BenchmarkReplayScale measure the request
// key and a large cassette's start-up. BenchmarkParallelRecording records
// through one recorder process and through four sharing a cassette
// directory.
//
// BenchmarkScriptedRun times the fixture's scripted Run on the reference
// agent against the agent's own time for the same input, posted straight
// to its route (target: a median Run <= 100 ms):
//
//	go test ./bench -run '^$' -bench ScriptedRun -count 6
package bench
