// Package fixturetest holds no code: its tests drive the reference
// agent through the public fixture, in-process and as its binary, the
// way a user's tests drive their own app, and check what the agent does
// (its replies, tool calls, turns, forks, queue and automations).
package fixturetest
