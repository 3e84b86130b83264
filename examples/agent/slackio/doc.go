// Package slackio is the reference agent's Slack I/O: the signed Events
// API webhook coming in (Sign, Verify, Envelope) and the Web API calls
// going out (Client: replies that wait out rate limits, the assistant
// thread status, reactions, private links, thread reads). The turn loop
// and the routes say what to send; this package knows how Slack wants it.
package slackio
