// Package vet checks that an app's agent tests stay honest: that they
// drive the app from outside through agentvcr's fixture, as Junior's
// fixture contract asks, and do not pass by faking the model or reaching
// into the app's runtime.
//
// An agent test is a _test.go file of a package whose test files import
// the fixture. Three rules hold for it (docs/vet.md defines them):
//
//   - imports: the fixture, agentvcr's public packages for tests, the
//     standard library, test libraries and the app packages declared
//     public (its test support, such as a package that describes the app
//     to the fixture); no other package of the app's module;
//   - model-fakes: no stand-in model of the test's own (fakeai.NewServer,
//     fixture.Upstream without the scripted model, an httptest server
//     answering model routes): the fixture's scripted model or recordings;
//   - internals: no SQL against the app's database and no calls into the
//     app's runtime packages.
//
// NewAnalyzer is the check as a golang.org/x/tools/go/analysis analyzer,
// for any analysis driver; Run loads packages and runs it, and a Ratchet
// holds today's offences, a list that may only get shorter. recorder vet
// puts the two together.
//
// The analyzer matches by import path and name, with code of its own: it
// shares nothing with the fixture it checks the use of.
package vet
