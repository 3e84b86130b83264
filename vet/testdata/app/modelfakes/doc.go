// Package modelfakes holds an agent test with models of its own.
package modelfakes
