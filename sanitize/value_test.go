package sanitize

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/history"
)

// A value that is not recorded history is sanitized as a row's payload:
// the people and the secrets in it are replaced, the rest kept.
func TestSanitizeValue(t *testing.T) {
	s, err := New(Options{Key: []byte("0123456789abcdef0123"), Names: []string{"Nadia Noor"}})
	if err != nil {
		t.Fatal(err)
	}
	token := "xoxb-" + strings.Repeat("1", 12) + "-" + strings.Repeat("a", 24)
	doc := `{"requestIds":["req_0142"],"state":{"owner":"nadia.noor@corp.io","note":"Nadia Noor asked, token ` + token + `"},"count":3}`
	out, err := s.SanitizeValue([]byte(doc), "evidence.json")
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, leak := range []string{"nadia.noor@corp.io", "Nadia", "Noor", token} {
		if strings.Contains(got, leak) {
			t.Errorf("%q survived: %s", leak, got)
		}
	}
	if !strings.Contains(got, `"requestIds":["req_0142"]`) || !strings.Contains(got, `"count":3`) || !strings.HasPrefix(got, `{"requestIds"`) {
		t.Errorf("what is not personal changed: %s", got)
	}
	if _, err := s.SanitizeValue([]byte(`["not", "an object"]`), "x.json"); !errors.Is(err, history.ErrInvalid) || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("an array: %v", err)
	}
}
