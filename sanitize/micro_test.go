package sanitize

import (
	"os"
	"testing"
)

func BenchmarkMatcherFind(b *testing.B) {
	doc, _ := os.ReadFile("../recordings/samples/slack-thread.json")
	for len(doc) < 4<<20 {
		doc = append(doc, doc...)
	}
	s, _ := New(Options{Key: testKey})
	s.Learn([]byte(`{"version":1,"surface":"web","identities":[{"id":"a1b2c3d4-0000-4000-8000-000000000001","kind":"user","provider":"slack","providerTenantId":"T0TEAM0001","providerSubjectId":"U0ADA00001","displayName":"Ada Quill","handle":"ada.quill","email":"ada.quill@corp.io"}],"events":[]}`), "x")
	s.dict.build(s.fk)
	src := string(doc)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		s.dict.matcher.find(src, allNeedles)
	}
}
