package sanitize

import (
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

// The leak check is package leakcheck, which imports nothing of the
// rewrite: the compiler keeps it from sharing matching code with what it
// checks. The sanitizer hands it what it learned and asks it of each
// document it wrote.

// ErrLeak is matched by the error of a Sanitize that found personal data or
// a secret in its own output, and wrote nothing.
var ErrLeak = leakcheck.ErrLeak

type (
	// LeakError lists what survived in one file.
	LeakError = leakcheck.LeakError
	// Hit is one value the leak check found, never the value itself.
	Hit = leakcheck.Hit
)

// LeakRules are the exceptions of r that the leak check honours.
func (r *Rules) LeakRules() leakcheck.Rules {
	return leakcheck.Rules{NotSecrets: r.NotSecrets, IDFields: r.IDFields, NotNames: r.NotNames}
}

// checker is the leak check, with every entry of the dictionary added.
func (s *Sanitizer) checker() *leakcheck.Checker {
	if s.leak == nil {
		rules := s.rules.LeakRules()
		rules.NoNames = !s.detectNames
		c, err := leakcheck.New(leakcheck.Config{Rules: rules, Issued: s.issued,
			Digest: func(kind, value string) string { return s.fk.digest(Kind(kind), value) }})
		if err != nil {
			panic("sanitize: rules checked by New: " + err.Error())
		}
		s.leak = c
	}
	for i := s.leak.Len(); i < len(s.dict.list); i++ {
		e := s.dict.list[i]
		s.leak.Add(leakcheck.Value{Kind: string(e.kind), Text: e.value})
	}
	return s.leak
}

// verify checks a sanitized document against its input.
func (s *Sanitizer) verify(in string, out []byte) []Hit {
	return s.checker().Verify(in, out)
}

// issued reports whether v is a fake of kind k this Sanitizer wrote, as
// written or with only its letters and digits compared (a phone's fake
// may be written with other separators).
func (s *Sanitizer) issued(kind, val string) bool {
	k := Kind(kind)
	if s.fk.taken[kindValue{k, val}] {
		return true
	}
	if len(s.fk.taken) != s.issuedAt {
		s.issuedBy = map[Kind]map[string]bool{}
		for kv := range s.fk.taken {
			if kv.kind == KindPhone || kv.kind == KindBirthDate || kv.kind == KindPassport {
				if s.issuedBy[kv.kind] == nil {
					s.issuedBy[kv.kind] = map[string]bool{}
				}
				s.issuedBy[kv.kind][alnumLower(kv.value)] = true
			}
		}
		s.issuedAt = len(s.fk.taken)
	}
	return s.issuedBy[k][alnumLower(val)]
}

func alnumLower(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b = append(b, c)
		}
	}
	return string(b)
}

// stampNames is what the stamp says of the name detector: that it was
// off, when it was, so that the leak check of a file in git does not
// look for names the rewrite was told to leave.
func (s *Sanitizer) stampNames() string {
	if s.detectNames {
		return ""
	}
	return `, "detectNames": false`
}
