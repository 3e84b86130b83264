package sanitize

import (
	"fmt"
	"strings"
	"testing"
)

// stampedDoc is a stamped document of tool results with the given
// payloads (JSON).
func stampedDoc(payloads ...string) string {
	rows := make([]string, len(payloads))
	for i, p := range payloads {
		rows[i] = fmt.Sprintf(`{"seq":%d,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":%s}`, i, p)
	}
	return `{"version":1,"surface":"web","exporter":{"sanitizer":{"tool":"agentvcr-sanitize"}},"events":[` + strings.Join(rows, ",") + `]}`
}

func TestLeakCheckTakesItsOwnFakePhones(t *testing.T) {
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	// As written, and as a number without its separators and +.
	fake := s.fk.fake(KindPhone, "+49 151 12345670")
	doc := stampedDoc(fmt.Sprintf(`{"phone": %q, "mobile": %s}`, fake, strings.Trim(strings.ReplaceAll(fake, " ", ""), "+")))
	if hits := s.verify(doc, []byte(doc)); len(hits) != 0 {
		t.Fatalf("a fake the Sanitizer wrote is a hit: %+v", hits)
	}
}

func TestLeakCheckTakesItsOwnFakeDates(t *testing.T) {
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	// The rewrite's fakes of these kinds keep their shape: the record of
	// what it wrote tells them.
	s.fk.taken[kindValue{KindBirthDate, "1971-05-12"}] = true
	s.fk.taken[kindValue{KindPassport, "X7710245"}] = true
	doc := stampedDoc(`{"text": "DOB: 1971-05-12, passport X7710245"}`)
	if hits := s.verify(doc, []byte(doc)); len(hits) != 0 {
		t.Fatalf("fakes the Sanitizer wrote are hits: %+v", hits)
	}
	other := stampedDoc(`{"text": "DOB: 1971-05-13, passport X7710246"}`)
	if hits := s.verify(other, []byte(other)); len(hits) != 2 {
		t.Fatalf("values it did not write: %+v; want two hits", hits)
	}
}

// Sanitized with the detector off, the names stay, and the stamp tells
// the leak check of a file in git not to look for them.
func TestNoDetectNamesIsStamped(t *testing.T) {
	raw := strings.Replace(stampedDoc(`{"text": "ask Oskar Lindqvist"}`), `"exporter":{"sanitizer":{"tool":"agentvcr-sanitize"}},`, "", 1)
	s, err := New(Options{Key: testKey, NoDetectNames: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize([]byte(raw), "f.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "Oskar Lindqvist") || !strings.Contains(string(out), `"detectNames": false`) {
		t.Fatalf("with the detector off: %s", out)
	}
	if problems, err := checkFile(out, "f.json"); err != nil || len(problems) != 0 {
		t.Errorf("the stamp says the detector was off, the check found %v, %v", problems, err)
	}
	s, _ = New(Options{Key: testKey})
	out, err = s.Sanitize([]byte(raw), "f.json")
	if err != nil || strings.Contains(string(out), "Oskar") || strings.Contains(string(out), "detectNames") {
		t.Fatalf("with the detector on: %s, %v", out, err)
	}
}
