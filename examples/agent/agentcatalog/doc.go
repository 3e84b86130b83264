// Package agentcatalog is the reference agent's test catalog: two suites
// (answers, threads) over three profiles (the agent loop on Sonnet, on
// Haiku, and on Sonnet with one tool call, which runs in-process only)
// and two environments (in-process, and the agent's binary as a
// process). Its program, examples/agent/cmd/catalog, lists its cells
// (recorder catalog ./examples/agent/cmd/catalog --list, from the
// repository's root) and runs them (--suite S --profile P).
package agentcatalog
