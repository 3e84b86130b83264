// Package agentcatalog is the reference agent's test catalog: two suites
// (answers, threads) over three profiles (the agent loop on Sonnet, on
// Haiku, and on Sonnet with one tool call, which runs in-process only)
// and two environments (in-process, and the agent's binary as a
// process). recorder catalog --list lists its cells; recorder eval
// --suite S --profile P runs them.
package agentcatalog
