// Package proxy is agentvcr's recording proxy: an HTTPS man-in-the-middle
// proxy (goproxy, with agentvcr's own CA from package proxy/ca) that an
// agent under test sends its model, Slack and web traffic through with
// HTTPS_PROXY. It records what goes live and replays it on the next run,
// streams included: a recorded response is teed to the agent as it
// arrives, never buffered, and a replayed one is sent in its original
// chunks.
//
// Only the origins on the allow list are reached; any other is refused
// with 403, or tunnelled untouched when configured. Each request meets the
// first rule that matches it, which sets its mode:
//
//   - auto: replay a recording, or go live and record;
//   - replay: replay a recording, or answer 412 with the nearest recording
//     and the parts that differ; nothing goes live;
//   - record: go live and record again, replacing what the cassette held
//     of the request when the proxy started;
//   - passthrough: go live and write nothing;
//   - mock: answer from the in-process Slack mock (Proxy.Slack, such as
//     package proxy/slack's);
//   - fake: answer from the in-process scripted model (Proxy.Fake, such
//     as package fakeai's).
//
// Every response carries X-Agentvcr: replayed, recorded, live, missed,
// passthrough, mocked or fault. Recordings go to go-vcr v3 cassettes
// (package proxy/cassette), one file per rule, redacted and secret-scanned
// before they are written; 429 and 5xx responses are never recorded, nor
// is a WebSocket, which goes live under auto and record and misses in
// replay. Many proxies, in one process or many, may record into one
// directory: each merges what it recorded into the cassettes as they are
// then (cassette.Merge), under a lock file beside each.
//
// Every wait on the agent has a deadline (ReadHeaderTimeout,
// HandshakeTimeout, IdleTimeout), so that connections that go quiet do
// not pile up; serve the proxy with Server for plain connections to have
// them too.
//
// While it serves, the proxy reads model traffic with package proxy/wire
// and reports each request's progress (Subscribe): the model request, the
// tools the model asks for, the Slack replies the agent delivers. A
// subscriber that does not return holds the request there, so a test can
// act before the agent goes on. Faults (AddFault) make a request fail the
// way providers and Slack fail. InFlight says what it has not finished.
// Package control serves all of it, with the two mocks, over HTTP for
// tests in other languages. The proxy imports neither mock: it serves
// each as the handler its caller gives it (Mock, Fake).
package proxy
