// Package app is the reference agent: its configuration, its routes
// (Junior's: the signed Slack webhook, the web conversation routes, forks,
// the heartbeat, the OAuth callback, reporting, health, and an idle
// route Junior lacks), a mailbox per conversation whose worker takes
// every pending input as one turn, and the turn itself: a router call on
// the AI SDK protocol, the agent loop on Anthropic Messages with its
// tools, and the rows Junior writes, in Junior's order.
package app
