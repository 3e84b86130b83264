// A stand-in for a test library.
module github.com/google/go-cmp

go 1.26.0
