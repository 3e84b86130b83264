package sanitize

import (
	"os"
	"testing"

	"github.com/tidwall/gjson"
)

func BenchmarkScanFind(b *testing.B) {
	doc, _ := os.ReadFile("../recordings/samples/slack-thread.json")
	for len(doc) < 4<<20 {
		doc = append(doc, doc...)
	}
	s, _ := New(Options{Key: testKey})
	s.Learn([]byte(`{"version":1,"surface":"web","identities":[{"id":"a1b2c3d4-0000-4000-8000-000000000001","kind":"user","provider":"slack","providerTenantId":"T0TEAM0001","providerSubjectId":"U0ADA00001","displayName":"Ada Quill","handle":"ada.quill","email":"ada.quill@corp.io"}],"events":[]}`), "x")
	s.dict.build(s.fk)
	src := string(doc)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for range b.N {
			s.dict.matcher.scan(src)
		}
	})
	b.Run("find", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for range b.N {
			s.dict.matcher.find(src, nil)
		}
	})
	b.Run("valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for range b.N {
			gjsonValid(src)
		}
	})
}

func gjsonValid(s string) bool { return gjson.Valid(s) }
