// Package jsontest compares JSON documents in tests by value, not by bytes.
package jsontest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Equal reports whether a and b hold the same JSON value: the same keys and
// values, in any key order and layout. Malformed JSON fails the test.
func Equal(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		tb.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
