// Package judge stands in for agentvcr's judge.
package judge

type Rubric struct{ Pass []string }
