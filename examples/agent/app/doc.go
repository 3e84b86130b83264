// Package app is the reference agent's wiring and routes: its
// configuration (FromEnv), and its HTTP surface, Junior's routes (the
// signed Slack webhook, the web conversation routes, forks, the
// heartbeat, the OAuth callback, reporting, health) and the internal
// routes Junior lacks that a test drives it with (idle, queue,
// conversations, automations). The work behind the routes is elsewhere,
// one job per package: turn runs the turns, junior spells the rows,
// slackio talks to Slack, store keeps the conversations and llm calls
// the model.
package app
