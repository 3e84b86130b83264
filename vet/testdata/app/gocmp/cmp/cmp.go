// Package cmp stands in for go-cmp.
package cmp

func Diff(x, y any) string { return "" }
