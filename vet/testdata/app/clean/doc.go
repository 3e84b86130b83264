// Package clean holds agent tests that keep every rule.
package clean
