package clean_test

import (
	"net/http"
	"testing"
)

// get reads a page of the app's own routes, as a user would.
func get(t *testing.T, url string) {
	t.Helper()
	if _, err := http.Get(url); err != nil {
		t.Fatal(err)
	}
}
