// Package internals holds an agent test that reaches into the app.
package internals
