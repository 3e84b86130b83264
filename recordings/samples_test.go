package recordings

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/sanitize"
)

var update = flag.Bool("update", false, "write the sample recordings again")

func TestSamplesAreGenerated(t *testing.T) {
	slack, _ := juniortest.SlackThread()
	web, _ := juniortest.WebLaunch()
	for name, c := range map[string]*juniortest.Conversation{"slack-thread.json": slack, "web-launch.json": web} {
		rec := &history.Recording{Header: history.Header{
			Version:    history.Version,
			Surface:    c.Surface,
			Exporter:   &history.Exporter{Tool: "agentvcr", Profile: "junior", ConversationID: c.ID},
			Identities: c.Identities,
		}}
		for _, e := range c.Events {
			if !juniortest.Uncopied(e.Type) {
				rec.Events = append(rec.Events, e)
			}
		}
		var buf bytes.Buffer
		if err := history.Write(&buf, rec); err != nil {
			t.Fatal(err)
		}
		// The samples are synthetic, but they go through the sanitizer like
		// any recording meant for git; the key is public because nothing
		// real is behind it.
		s, err := sanitize.New(sanitize.Options{Key: []byte("agentvcr-public-sample-key-00001")})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := s.Sanitize(buf.Bytes(), name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("samples", name)
		if *update {
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := fs.ReadFile(Samples(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, doc) {
			t.Errorf("%s is out of date: run go test ./recordings -update", path)
		}
	}
}
