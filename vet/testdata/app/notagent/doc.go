// Package notagent holds a test that is no agent test: it does not import
// the fixture, so the rules do not apply.
package notagent
