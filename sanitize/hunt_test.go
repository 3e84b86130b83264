package sanitize_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The hunt: code of the tests' own, sharing nothing with the sanitizer's
// rewrite or its leak check, that says whether a planted value is in a
// document in any form. It reads every string of the document at every
// depth (object keys, numbers, strings that are JSON documents), and the
// HTML-entity-, percent- and base64-decoded forms of each, again at any
// depth; folds every text (NFKC, case, diacritics, apostrophes, invisible
// characters); and looks for
//   - a name with any separator between its parts (space, _, -, ., /,
//     none), in either order, as an initial and a surname, and the surname
//     alone where the name allows it, as whole words;
//   - any other value as a substring of the folded text and of the raw
//     bytes, and for numbers also in the digits of each run of digits and
//     separators.

// haystack is everything a document says, folded.
type haystack struct {
	folded []string // texts, folded
	words  []string // texts, folded, every run of non-letters one space, padded with spaces
	digits []string // every run of digits and separators, digits only
	emails []string // email-shaped strings, as written
}

var (
	base64Run   = regexp.MustCompile(`[A-Za-z0-9+/_\-\r\n]{16,}={0,2}`)
	digitRun    = regexp.MustCompile(`\d[\d \t().+/-]*\d`)
	emailShaped = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`)
	folder      = cases.Fold()
)

// fold is the tests' normal form: NFKC, no invisible characters, one
// apostrophe, case folded, no diacritics, and the letters that carry a
// stroke instead of a mark written plain.
func fold(s string) string {
	s = norm.NFKC.String(s)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\u200b', '\u200c', '\u200d', '\u200e', '\u200f', '\u00ad', '\u2060', '\ufeff':
			return -1
		case '\u2019', '\u2018', '\u02bc', '`', '\u00b4':
			return '\''
		}
		return r
	}, s)
	s = folder.String(s)
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, norm.NFD.String(s))
	return strings.NewReplacer("ø", "o", "ł", "l", "đ", "d", "ß", "ss", "æ", "ae", "œ", "oe", "ı", "i", "ð", "d", "þ", "th", "ħ", "h").Replace(s)
}

// words keeps letters and digits and makes every other run one space.
func words(s string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

// texts returns every text of a JSON document, decoded at every depth; an
// error if it is not JSON.
func texts(doc []byte) ([]string, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var out []string
	var value func(v any, depth int)
	var text func(s string, depth int)
	value = func(v any, depth int) {
		switch v := v.(type) {
		case string:
			text(v, depth)
		case json.Number:
			out = append(out, v.String())
		case map[string]any:
			for k, x := range v {
				text(k, depth)
				value(x, depth)
			}
		case []any:
			for _, x := range v {
				value(x, depth)
			}
		}
	}
	text = func(s string, depth int) {
		out = append(out, s)
		if depth > 6 {
			return
		}
		if t := strings.TrimSpace(s); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var inner any
			dec := json.NewDecoder(strings.NewReader(t))
			dec.UseNumber()
			if dec.Decode(&inner) == nil {
				value(inner, depth+1)
			}
		}
		if h := html.UnescapeString(s); h != s {
			text(h, depth+1)
		}
		if strings.Contains(s, "%") {
			if u, err := url.QueryUnescape(s); err == nil && u != s {
				text(u, depth+1)
			} else if u, err := url.PathUnescape(s); err == nil && u != s {
				text(u, depth+1)
			}
		}
		for _, d := range base64Texts(s) {
			text(d, depth+1)
		}
	}
	value(v, 0)
	return out, nil
}

// base64Texts decodes every base64-looking run of s, whole or line by
// line, in either alphabet, padded or not, and keeps what decodes to text.
func base64Texts(s string) []string {
	var out []string
	for _, run := range base64Run.FindAllString(s, -1) {
		candidates := []string{strings.Join(strings.Fields(run), "")}
		if f := strings.Fields(run); len(f) > 1 {
			candidates = append(candidates, f...)
		}
		for _, c := range candidates {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				in := c
				if enc == base64.RawStdEncoding || enc == base64.RawURLEncoding {
					in = strings.TrimRight(c, "=")
				}
				b, err := enc.DecodeString(in)
				if err == nil && looksLikeText(b) {
					out = append(out, string(b))
					break
				}
			}
		}
	}
	return out
}

func looksLikeText(b []byte) bool {
	if len(b) < 4 || !utf8.Valid(b) {
		return false
	}
	printable := 0
	for _, r := range string(b) {
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || r == '\r' {
			printable++
		}
	}
	return printable*10 >= utf8.RuneCount(b)*9
}

// hayOf builds the haystack of a document, or says why it cannot.
func hayOf(doc []byte) (*haystack, error) {
	ts, err := texts(doc)
	if err != nil {
		return nil, err
	}
	ts = append(ts, string(doc))
	h := &haystack{}
	for _, t := range ts {
		f := fold(t)
		h.folded = append(h.folded, f)
		h.words = append(h.words, words(f))
		for _, run := range digitRun.FindAllString(t, -1) {
			h.digits = append(h.digits, strings.Map(func(r rune) rune {
				if r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, run))
		}
		h.emails = append(h.emails, emailShaped.FindAllString(t, -1)...)
	}
	return h, nil
}

// nameForms are the word sequences a name is written as, folded: the
// parts joined by any separator (words makes every separator one space) or
// by none, in either order, the first part as an initial, and the surname
// alone when asked.
func nameForms(n plantedName) []string {
	parts := strings.Fields(words(fold(n.Name)))
	if len(parts) < 2 {
		return []string{" " + strings.Join(parts, " ") + " "}
	}
	first, last := parts[0], parts[len(parts)-1]
	forms := []string{
		strings.Join(parts, " "), strings.Join(parts, ""),
		last + " " + first, last + first,
	}
	if n.Script == "latin" {
		initial, _ := utf8.DecodeRuneInString(first)
		forms = append(forms, string(initial)+" "+last, string(initial)+last)
		if n.SurnameAlone {
			forms = append(forms, last)
		}
	}
	for i, f := range forms {
		forms[i] = " " + f + " "
	}
	return forms
}

// findName returns the form in which a name is in the haystack, if any.
func (h *haystack) findName(n plantedName) (string, bool) {
	for _, f := range nameForms(n) {
		for _, w := range h.words {
			if strings.Contains(w, f) {
				return strings.TrimSpace(f), true
			}
		}
	}
	return "", false
}

// findValue says whether a value other than a name is in the haystack.
func (h *haystack) findValue(v plantedValueOf) bool {
	f := fold(v.Value)
	for _, t := range h.folded {
		if strings.Contains(t, f) {
			return true
		}
	}
	if d := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, v.Value); len(d) >= 8 && len(d)*10 >= len(v.Value)*7 {
		for _, run := range h.digits {
			if strings.Contains(run, d) {
				return true
			}
		}
	}
	return false
}

// survivorsOf lists the planted names and values the document holds, by
// class, form and value: the values are made up, so a message may show
// them.
func survivorsOf(h *haystack, p *plantedDirValues) []string {
	var out []string
	for _, n := range p.Names {
		if form, ok := h.findName(n); ok {
			out = append(out, fmt.Sprintf("%s name %q (as %q)", n.Class, n.Name, form))
		}
	}
	for _, v := range p.Values {
		if h.findValue(v) {
			out = append(out, fmt.Sprintf("%s %q (%s)", v.Class, v.Value, v.What))
		}
	}
	return out
}

// reservedDomain says whether an email's domain is one the sanitizer may
// write: example.com/.org/.net and the reserved top-level domains.
func reservedDomain(email string) bool {
	d := strings.ToLower(email[strings.LastIndexByte(email, '@')+1:])
	switch d {
	case "example.com", "example.org", "example.net":
		return true
	}
	for _, tld := range []string{".example", ".test", ".invalid", ".localhost"} {
		if strings.HasSuffix(d, tld) {
			return true
		}
	}
	return false
}

// TestHuntFindsEveryForm holds the hunt itself to what it claims: a
// planted value in each form and at each depth is found, and what only
// looks like it is not.
func TestHuntFindsEveryForm(t *testing.T) {
	name := plantedName{Name: "Lucía Ferrer", Script: "latin", SurnameAlone: true}
	email := plantedValueOf{Class: "email", Value: "lucia.ferrer@quillfeather.io"}
	secret := plantedValueOf{Class: "secret", Value: "Pa55word!"}
	ssn := plantedValueOf{Class: "ssn", Value: "123-45-6789"}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	nested := func(s string) string { b, _ := json.Marshal(map[string]string{"text": s}); return string(b) }
	doc := func(s string) []byte {
		b, _ := json.Marshal(map[string]any{"events": []any{map[string]string{"text": s}}})
		return b
	}
	for _, tc := range []struct {
		text  string
		found []string // "name", "email", "secret", "ssn"
	}{
		{"ask Lucía Ferrer about it", []string{"name"}},
		{"LUCIA FERRER", []string{"name"}},
		{"Lucia\u0301 Ferrer", []string{"name"}},
		{"Ferrer, Lucía", []string{"name"}},
		{"lucia_ferrer_cv.pdf", []string{"name"}},
		{"https://www.linkedin.com/in/lucia-ferrer-4b2a1", []string{"name"}},
		{"access_review_Lucia_Ferrer_Other_Person.xlsx", []string{"name"}},
		{"LuciaFerrer", []string{"name"}},
		{"l.ferrer", []string{"name"}},
		{"Ferrer said so", []string{"name"}},
		{"Luc\u200bía Fer\u00adrer", []string{"name"}},
		{"Lucía&nbsp;Ferrer", []string{"name"}},
		{"to=Luc%C3%ADa%20Ferrer", []string{"name"}},
		{nested(nested("cc Lucía Ferrer")), []string{"name"}},
		{"content: " + b64("owner: Lucía Ferrer <lucia.ferrer@quillfeather.io>\n"), []string{"name", "email"}},
		{"Authorization: Basic " + b64("someone:Pa55word!"), []string{"secret"}},
		{nested(b64(nested("SSN 123 45 6789"))), []string{"ssn"}},
		{"mailto:LUCIA.FERRER@QUILLFEATHER.IO", []string{"name", "email"}},
		{"curl -u someone@example.org:Pa55word! https://x", []string{"secret"}},
		// What only looks like them.
		{"Lucas Ferreira and Lucía Fernández", nil},
		{"ferreria lucid", nil},
		{"SSN 123-45-6780, pa55word", nil},
	} {
		h, err := hayOf(doc(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if _, ok := h.findName(name); ok {
			got = append(got, "name")
		}
		for _, v := range []struct {
			what string
			v    plantedValueOf
		}{{"email", email}, {"secret", secret}, {"ssn", ssn}} {
			if h.findValue(v.v) {
				got = append(got, v.what)
			}
		}
		if !slices.Equal(got, tc.found) {
			t.Errorf("%q: found %v, want %v", tc.text, got, tc.found)
		}
	}
}

func TestGitHubWrapped(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{githubBase64(pdCodeowners()), true},
		{githubBase64("a"), true},
		{githubBase64(strings.Repeat("x", 45)), true},
		{strings.TrimSuffix(githubBase64(pdCodeowners()), "\n"), false},
		{strings.ReplaceAll(githubBase64(pdCodeowners()), "\n", ""), false},
		{base64.StdEncoding.EncodeToString([]byte(pdCodeowners())) + "\n", false},
		{strings.Replace(githubBase64(pdCodeowners()), "I", "-", 1), false},
	} {
		if got := githubWrapped(tc.s); got != tc.want {
			t.Errorf("githubWrapped(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
