package sanitize

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/sanitize/fakemark"
)

// These hold what a review found, each as the attacker wrote it.

// randomToken is a high-entropy token, never a real one.
func randomToken(rng *rand.Rand, n int) string {
	const a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = a[rng.IntN(len(a))]
	}
	return string(b)
}

func TestSecretsNamedByTheirKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tok := []string{randomToken(rng, 40), randomToken(rng, 32), randomToken(rng, 36), randomToken(rng, 28), randomToken(rng, 44)}
	payload := fmt.Sprintf(`{"result": {"access_token": %q, "apiKey": %q, "token": %q, "x-api-key": %q, "headers": {"Authorization": "Bearer %s"}}}`,
		tok[0], tok[1], tok[2], tok[3], tok[4])
	nested := fmt.Sprintf(`{"version":1,"surface":"web","events":[{"seq":0,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":%s},{"seq":1,"type":"tool_result","createdAtMs":2,"historyVersion":0,"schemaVersion":2,"payload":{"message":%q}}]}`,
		payload, payload)
	out := sanitize(t, []byte(nested), Options{})
	for _, tk := range tok {
		if strings.Contains(out, tk) {
			t.Errorf("a secret named by its key survived: %s", eventsOf(out))
			break
		}
	}
	if found, err := checkFile([]byte(out), "out"); err != nil || len(found) != 0 {
		t.Fatalf("check: %v %v", found, err)
	}
	if found, _ := checkFile([]byte(nested), "in"); len(found) < 4 {
		t.Fatalf("check of the raw input found %d problems: %+v", len(found), found)
	}
}

func TestMessagesNeverShowTheValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tok := "ghp_" + randomToken(rng, 36)
	email := "nadia.noor@corp.io"
	key64 := base64.StdEncoding.EncodeToString([]byte(email))
	for name, doc := range map[string]string{
		"type":        fmt.Sprintf(`{"version":1,"surface":"web","events":[{"seq":0,"type":%q,"payload":{"text":"hi"}}]}`, tok),
		"parent key":  fmt.Sprintf(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"extra":{%q:{"mail":"a.b@corp.io"}}}}]}`, tok),
		"base64 key":  fmt.Sprintf(`{"version":1,"surface":"web","identities":[{"id":"i1","kind":"user","provider":"slack","providerSubjectId":"U0NADIA401","email":%q}],"events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"extra":{%q:{"child":"x"}}}}]}`, email, key64),
		"people file": `{"kind":"agentvcr-people","version":1,"identities":[],"nadia.noor@corp.io":1}`,
	} {
		s, _ := New(Options{Key: testKey, ReportPaths: true})
		var msgs []string
		if name == "people file" {
			_, err := ReadPeople(strings.NewReader(doc), "people.json")
			msgs = append(msgs, fmt.Sprint(err))
		} else {
			// Refused, or written: either way what it says holds no value.
			if _, err := s.Sanitize([]byte(doc), "f.json"); err != nil {
				msgs = append(msgs, err.Error())
			}
			found, _ := checkFile([]byte(doc), "f.json")
			msgs = append(msgs, fmt.Sprint(found), fmt.Sprint(s.Report().Paths))
		}
		for _, m := range msgs {
			for _, v := range []string{tok, key64, email} {
				if strings.Contains(m, v) {
					t.Errorf("%s: a message shows a value: %s", name, m)
				}
			}
		}
	}
}

func TestPathologicalInputsStayFast(t *testing.T) {
	for name, text := range map[string]string{
		"spaced digits": strings.Repeat("1 ", 500_000),
		"escapes":       strings.Repeat(`\u0041`, 500_000),
		"digit groups":  strings.Repeat("4111 1111 ", 100_000),
	} {
		doc := `{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"text":"` + text + `"}}]}`
		s, err := New(Options{Key: testKey})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		// A timing of a call that failed early would prove nothing.
		if _, err := s.Sanitize([]byte(doc), name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// Linear work takes well under a second here; the quadratic ways
		// these inputs took once ran for minutes.
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s (%d bytes): %v", name, len(doc), d)
		}
	}
}

func TestSpellingsOfALearnedName(t *testing.T) {
	siobhan := identity("66666666-6666-4666-8666-666666666666", "U0SIOB0001", "Siobhan O'Brien", "siobhan.ob", "siobhan@corp.io")
	anne := identity("77777777-7777-4777-8777-777777777777", "U0ANNE0001", "Anne-Marie Duval-Lefevre", "amdl", "amdl@corp.io")
	nadia := identity("88888888-8888-4888-8888-888888888888", "U0NADI0001", "Nadia Noor", "nadia.noor", "nadia.noor@corp.io")
	text := "Siobhan OBrien, siobhan obrien, Siobhan O Brien, ANNE MARIE, AnneMarie, Duval Lefevre, NadiaNoor, " +
		"Na\u200bdia No\u200bor, Na\u00addia, nadia.noor\u200b@corp.io, nadia@corp\u200b.io"
	out := sanitize(t, recording(t, []history.Identity{siobhan, anne, nadia},
		row(0, "message", map[string]any{"messageId": "1", "role": "user", "text": text})), Options{})
	for _, gone := range []string{"Brien", "brien", "ANNE", "Anne", "MARIE", "Duval", "Lefevre", "Nadia", "Noor", "Na\\u200bdia", "Na\u200bdia", "corp.io"} {
		if strings.Contains(eventsOf(out), gone) {
			t.Errorf("%q survived: %s", gone, eventsOf(out))
		}
	}
}

func TestMoreFormsOfNumbersAndIDs(t *testing.T) {
	in := `{"version":1,"surface":"web","events":[{"seq":0,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"cards":[4111111111111111.0,-4111111111111111],"phones":[14155552671.0,-14155552671],
		"text":"see https://northwind.slack-gov.com/archives and local:web:4f1c, card 4111.1111.1111.1111, table 1 23 4 567 89 10 111 2 33 44 5 66 7 88 9"}}]}`
	out := sanitize(t, []byte(in), Options{})
	for _, gone := range []string{"4111111111111111", "14155552671", "northwind", "4f1c", "4111.1111"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q survived: %s", gone, eventsOf(out))
		}
	}
	if !strings.Contains(out, "table 1 23 4 567 89 10 111 2 33 44 5 66 7 88 9") {
		t.Errorf("a table of small numbers was taken for a card: %s", eventsOf(out))
	}
	s, _ := New(Options{Key: testKey})
	// Shorter than the rewrite reads base64 (12 characters): refused.
	short := base64.StdEncoding.EncodeToString([]byte("hi Nadia!"))
	doc := `{"version":1,"surface":"web","identities":[{"id":"i1","kind":"user","provider":"slack","providerSubjectId":"U0NADI0001","displayName":"Nadia Noor"}],"events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"blob":"` + short + `"}}]}`
	if _, err := s.Sanitize([]byte(doc), "b.json"); !errors.Is(err, ErrLeak) {
		t.Errorf("a name in short base64: %v; want a refusal", err)
	}
	if _, err := s.Sanitize([]byte("{\"version\":1,\"surface\":\"web\",\"events\":[{\"seq\":0,\"type\":\"message\",\"createdAtMs\":1,\"historyVersion\":0,\"schemaVersion\":1,\"payload\":{\"text\":\"a\tb\"}}]}"), "tab.json"); !errors.Is(err, history.ErrInvalid) {
		t.Errorf("a raw tab in a string: %v; want bad input", err)
	}
	if _, err := s.Sanitize([]byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","pay`), "cut.json"); !errors.Is(err, history.ErrInvalid) || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("a truncated file: %v; want it called truncated", err)
	}
}

func TestCheckTellsRealSlackIDsFromFakes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	passed := 0
	for range 3000 {
		b := []byte("U0")
		for range 8 {
			b = append(b, base36[rng.IntN(36)])
		}
		if fakemark.SlackID(string(b)) {
			passed++
		}
	}
	// Two check characters: one in 1,296 passes.
	if passed > 10 {
		t.Fatalf("%d of 3000 random ids pass for fakes", passed)
	}
}
