// Package loader stands in for agentvcr's loader.
package loader

func Load(url, file string) error { return nil }
