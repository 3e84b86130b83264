// Package catalog declares suites of agent tests as data a team can
// review: each suite a matrix of profiles (an agent configuration: model,
// provider, credential, options), environments (how the app runs) and
// cases, whose cells have stable execution ids
// <suite>.<profile>.<environment>.<case>.
//
// A Catalog validates itself before anything runs: a suite whose real
// size differs from the size it declares is refused, so that adding a
// case is a reviewed change; an unsupported profile and environment pair
// is declared on the profile, never decided in a test; a credential is
// only ever a reference to a secret ({type: "secret_ref", secretId,
// version: "latest"}), and a definition field that looks like a secret
// is refused, naming the suite, the field and the rule, never the value.
// Each suite has a fingerprint, a digest of its canonical definition and
// of the source files it names, that changes by itself with any change to
// what the suite measures, so that a dashboard can mark the boundary
// rather than join unlike totals.
//
// Cases are checked by typed, deterministic Matchers that say what they
// expected and what they saw. A Registry sets up a cell's data through
// the app's public routes only and tears it down in reverse order, also
// after a partial failure. Usage is what the run reports; zero or missing
// usage is unavailable, never free. Plan turns the cells a suite and
// profile select into evals the eval runner (package evals) runs.
package catalog
