package fixtureservice

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The page the service's errors point at has the section they name.
func TestErrorsPointAtASectionThatExists(t *testing.T) {
	page, anchor, _ := strings.Cut(doc, "#")
	raw, err := os.ReadFile("../" + page)
	if err != nil {
		t.Fatal(err)
	}
	slug := regexp.MustCompile(`[^a-z0-9 -]`)
	for _, line := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok && strings.ReplaceAll(slug.ReplaceAllString(strings.ToLower(h), ""), " ", "-") == anchor {
			return
		}
	}
	t.Fatalf("%s has no section #%s", page, anchor)
}
