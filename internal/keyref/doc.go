// Package keyref is proxy/cassette's request key as it was first
// computed: decode the body, re-encode each part, replace the changing
// values by expression, hash. It is the oracle the faster Matcher.Key is
// checked against, byte for byte, and the baseline BenchmarkKey measures
// it beside; only tests and benchmarks import it. Change nothing here but
// to follow a rename.
package keyref
