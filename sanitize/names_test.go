package sanitize

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestDetectNames(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"cc Imogen Hale and Oskar Lindqvist on it", []string{"Imogen Hale", "Oskar Lindqvist"}},
		{"ask Tunde Bakare about the budget", []string{"Tunde Bakare"}},
		{"ping Bartholomew Quennell today", []string{"Bartholomew Quennell"}},
		{"Lucía Ferrer's draft", []string{"Lucía Ferrer"}},
		{"thanks to Siobhan O'Neill and Anne-Marie McKay", []string{"Siobhan O'Neill", "Anne-Marie McKay"}},
		{"Позвони Ивану Петрову, Иван Петров ждёт", []string{"Ивану Петрову", "Иван Петров"}},
		{"Στείλε στον Γεώργιο Παπαδόπουλο", []string{"Γεώργιο Παπαδόπουλο"}},
		{"Mary Ann Smith joined", []string{"Mary Ann", "Ann Smith"}},
		{"see Oskar_Lindqvist_notes.txt", []string{"Oskar Lindqvist"}},
		// Product phrases and headings are no names.
		{"The Chat Completions API, Go Modules and Max Tokens", nil},
		{"Claude Sonnet and Claude Opus answer; Grant Access to the Web API", nil},
		{"## Quick Start\nRun the Test Suite with Node Test", nil},
		{"IMOGEN HALE in capitals, imogen hale in lower case", nil},
		{"Corin Abbot", nil}, // no listed word, no introducer: the known limit
	} {
		var got []string
		detectNames(c.text, nil, func(n string) { got = append(got, n) })
		if !slices.Equal(got, c.want) {
			t.Errorf("detectNames(%q) = %q; want %q", c.text, got, c.want)
		}
	}
}

func TestNotNamesKeepsAPhrase(t *testing.T) {
	var got []string
	detectNames("ask Jordan Park about Jordan Park Tours", []string{"jordan park tours"}, func(n string) { got = append(got, n) })
	if !slices.Equal(got, []string{"Jordan Park"}) {
		t.Fatalf("got %q; want the person only, not the phrase in notNames", got)
	}
}

func TestEmailName(t *testing.T) {
	for _, c := range []struct{ local, name, last string }{
		{"jo.kemp", "Jo Kemp", ""},
		{"imogen_hale", "Imogen Hale", ""},
		{"oskar-lindqvist2", "Oskar Lindqvist", ""},
		{"ada.quill+jira", "Ada Quill", ""},
		{"oskarlindqvist", "Oskar Lindqvist", ""},
		{"imogenhale", "", ""}, // hale is a word, in no surname list
		{"j.lindqvist", "", "Lindqvist"},
		{"data.team", "", ""},
		{"support", "", ""},
		{"no-reply", "", ""},
		{"build.bot", "", ""},
		{"x1", "", ""},
	} {
		name, last := emailName(c.local)
		if name != c.name || last != c.last {
			t.Errorf("emailName(%q) = %q, %q; want %q, %q", c.local, name, last, c.name, c.last)
		}
	}
}

func TestBase64RunsAreWrittenAsTheyWere(t *testing.T) {
	text := "# owners\n* @jo-kemp jo.kemp@corp.io\n/docs @imogen-hale imogen.hale@corp.io\n"
	std := base64.StdEncoding.EncodeToString([]byte(text))
	var wrapped []string
	for i := 0; i < len(std); i += 60 {
		wrapped = append(wrapped, std[i:min(i+60, len(std))])
	}
	for _, c := range []struct {
		name, run string
		dec       func(string) ([]byte, error)
	}{
		{"std", std, base64.StdEncoding.Strict().DecodeString},
		{"wrapped at 60", strings.Join(wrapped, "\n") + "\n", func(s string) ([]byte, error) {
			return base64.StdEncoding.Strict().DecodeString(strings.ReplaceAll(s, "\n", ""))
		}},
		{"raw url", base64.RawURLEncoding.EncodeToString([]byte(text + "??>>")), base64.RawURLEncoding.Strict().DecodeString},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Options{Key: testKey})
			if err != nil {
				t.Fatal(err)
			}
			doc := []byte(`{"version":1,"surface":"web","events":[{"seq":1,"type":"tool_result","createdAtMs":1,"historyVersion":0,"schemaVersion":1,"payload":{"content":` + encoder{}.encode(c.run) + `}}]}`)
			out, err := s.Sanitize(doc, "b.json")
			if err != nil {
				t.Fatal(err)
			}
			got := gjson.GetBytes(out, "events.0.payload.content").String()
			if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); strings.HasSuffix(got, "\n") != strings.HasSuffix(c.run, "\n") ||
				len(lines) > 1 && slices.ContainsFunc(lines[:len(lines)-1], func(l string) bool { return len(l) != 60 }) {
				t.Errorf("line breaks: %q; want lines of 60 as in %q", got, c.run)
			}
			dec, err := c.dec(got)
			if err != nil {
				t.Fatalf("the run no longer decodes as it did: %v (%q)", err, got)
			}
			for _, gone := range []string{"jo-kemp", "jo.kemp", "imogen", "corp.io"} {
				if strings.Contains(string(dec), gone) {
					t.Errorf("%q survived in %q", gone, dec)
				}
			}
			if !strings.HasPrefix(string(dec), "# owners\n* @") {
				t.Errorf("decoded %q; want the file with fakes", dec)
			}
		})
	}
}

func TestContextValuesAreReplacedEverywhere(t *testing.T) {
	secretKey := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ"
	text := strings.Join([]string{
		"AKIAIOSFODNN7EXAMPLF\n" + secretKey,
		"curl -u someone@example.com:Pa55word! https://api.corp.io",
		"mysql -u admin -pS3cretive db",
		"mysql -uroot -p'Qu0ted Pass' db",
		"wget --password=Hunter2Hunter2 https://corp.io/x",
		"curl -H 'Authorization: Bearer opaque-credential-4711' https://corp.io",
		"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLG\naws_secret_access_key = another/Secret+Key0123456789abcdefghij",
		"SSN 123-45-6789, DOB: 1984-03-12, born 12 March 1984, passport no. X1234567",
	}, "\n")
	doc := recording(t, nil,
		row(1, "message", map[string]any{"text": text, "phone": 4915112345670, "tel": "0151 1234 5670"}),
		row(2, "message", map[string]any{"text": "again: Pa55word! 123-45-6789 " + secretKey + " 0151 1234 5670"}),
		row(3, "tool_result", map[string]any{"sa": map[string]any{"type": "service_account", "project_id": "acme-prod-4711",
			"private_key_id": "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d8e7f6a5b", "client_id": "104729475829104857201",
			"client_email": "deployer@acme-prod-4711.iam.gserviceaccount.com"}}),
	)
	out := sanitize(t, doc, Options{})
	for _, gone := range []string{secretKey, "Pa55word!", "S3cretive", "Qu0ted", " Pass'", "Hunter2Hunter2", "opaque-credential-4711",
		"another/Secret+Key0123456789abcdefghij", "123-45-6789", "1984-03-12", "12 March 1984", "X1234567",
		"4915112345670", "0151 1234 5670", "acme-prod-4711", "3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d8e7f6a5b", "104729475829104857201"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q survived:\n%s", gone, eventsOf(out))
		}
	}
	if !strings.Contains(out, "SSN 9") {
		t.Errorf("the fake SSN is not in the 9xx area:\n%s", eventsOf(out))
	}
}

func TestNamesFromOneFileAreReplacedInAnother(t *testing.T) {
	// A person who writes in one file (their address there) and is only
	// named in another: learned from every file before any is written.
	a := recording(t, nil, row(1, "message", map[string]any{"text": "from imogen.hale@corp.io"}))
	b := recording(t, nil, row(1, "message", map[string]any{"text": "the review by hale is done; see Imogen_Hale_cv.pdf and linkedin.com/in/imogen-hale-4b2a1"}))
	s, err := New(Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string][]byte{"a.json": a, "b.json": b} {
		if err := s.Learn(doc, name); err != nil {
			t.Fatal(err)
		}
	}
	out, err := s.Sanitize(b, "b.json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(string(out)), "imogen") || strings.Contains(string(out), "Hale_") || strings.Contains(string(out), "-hale-") {
		t.Fatalf("a name learned in another file survived:\n%s", eventsOf(string(out)))
	}
	if s.Report().NamesDetected == nil {
		t.Error("the report does not count the names learned from addresses")
	}
}

func TestNoDetectNames(t *testing.T) {
	doc := recording(t, nil, row(1, "message", map[string]any{"text": "cc Imogen Hale"}))
	if out := sanitize(t, doc, Options{NoDetectNames: true}); !strings.Contains(out, "Imogen Hale") {
		t.Fatalf("with the detector off, a name in free text was replaced:\n%s", eventsOf(out))
	}
	if out := sanitize(t, doc, Options{}); strings.Contains(out, "Imogen") {
		t.Fatalf("with the detector on, a name in free text survived:\n%s", eventsOf(out))
	}
}

func TestIDNEmails(t *testing.T) {
	doc := recording(t, nil, row(1, "message", map[string]any{"text": "mail user@xn--e1afmkfd.xn--p1ai or пользователь@пример.рф"}))
	out := sanitize(t, doc, Options{})
	for _, gone := range []string{"xn--e1afmkfd", "пример", "пользователь"} {
		if strings.Contains(out, gone) {
			t.Errorf("%q survived:\n%s", gone, eventsOf(out))
		}
	}
}
