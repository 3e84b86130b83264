// Package control stands in for agentvcr's control API.
package control

const Path = "/__agentvcr"
