package words

import "testing"

func TestLists(t *testing.T) {
	tests := []struct {
		name string
		set  Set
		min  int
		has  []string
		not  []string
	}{
		{"english", English(), 50000, []string{"will", "mark", "rose", "table"}, []string{"Will", "imogen"}},
		{"given", Given(), 15000, []string{"Imogen", "Oskar", "Lucía", "Иван"}, []string{"imogen", "table"}},
		{"surnames", Surnames(), 15000, []string{"Kowalski", "Nowak"}, []string{"kowalski"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.set) < tt.min {
				t.Errorf("%d words, want at least %d", len(tt.set), tt.min)
			}
			for _, w := range tt.has {
				if !tt.set.Has(w) {
					t.Errorf("%q is missing", w)
				}
			}
			for _, w := range tt.not {
				if tt.set.Has(w) {
					t.Errorf("%q is in it", w)
				}
			}
		})
	}
	if d := Digest(); len(d) != 16 || d != Digest() {
		t.Errorf("Digest() = %q: want 16 hex digits, the same each call", d)
	}
}

func TestTables(t *testing.T) {
	if n, ok := IBANLength("DE"); !ok || n != 22 {
		t.Errorf("IBANLength(DE) = %d, %t", n, ok)
	}
	if _, ok := IBANLength("US"); ok {
		t.Error("the US has no IBAN")
	}
	if !SlackHost("files") || SlackHost("acme") {
		t.Error("SlackHost tells Slack's hosts from workspaces")
	}
}
