package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/jsontest"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func copied(events []history.Event) []history.Event {
	return slices.DeleteFunc(slices.Clone(events), func(e history.Event) bool { return juniortest.Uncopied(e.Type) })
}

func TestExportKeepsRowsAndDropsUncopied(t *testing.T) {
	ctx := context.Background()
	_, conn := juniortest.Database(t)
	conv, _ := juniortest.SlackThread()
	juniortest.Insert(t, conn, conv)

	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	e := &Exporter{DB: conn, WithIdentities: true, Now: func() time.Time { return at }}
	res, err := e.Export(ctx, conv.ID, &out)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := history.Read(&out, "export")
	if err != nil {
		t.Fatal(err)
	}
	want := copied(conv.Events)
	if res.Events != len(want) || len(rec.Events) != len(want) || len(want) == len(conv.Events) {
		t.Fatalf("exported %d rows (result says %d); want %d of %d", len(rec.Events), res.Events, len(want), len(conv.Events))
	}
	for i, got := range rec.Events {
		w := want[i]
		if !jsontest.Equal(t, got.Payload, w.Payload) {
			t.Errorf("seq %d: payload differs", w.Seq)
		}
		got.Payload, w.Payload = nil, nil
		if !reflect.DeepEqual(got, w) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if rec.Surface != history.SurfaceSlack {
		t.Errorf("surface %q", rec.Surface)
	}
	ex := rec.Exporter
	if ex == nil || ex.ConversationID != conv.ID || ex.Profile != "junior" || ex.Tool != "agentvcr" || ex.ExportedAt != "2026-11-29T12:00:00Z" {
		t.Errorf("exporter stamp %+v", ex)
	}
	if !reflect.DeepEqual(compactMetadata(t, rec.Identities), compactMetadata(t, conv.Identities)) {
		t.Errorf("identities:\n got %+v\nwant %+v", rec.Identities, conv.Identities)
	}
}

func TestExportWithoutIdentitiesOmitsActors(t *testing.T) {
	_, conn := juniortest.Database(t)
	conv, _ := juniortest.WebLaunch()
	juniortest.Insert(t, conn, conv)
	var out bytes.Buffer
	if _, err := (&Exporter{DB: conn}).Export(context.Background(), conv.ID, &out); err != nil {
		t.Fatal(err)
	}
	rec, err := history.Read(&out, "")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Surface != history.SurfaceWeb || len(rec.Identities) != 0 {
		t.Fatalf("surface %q, %d identities", rec.Surface, len(rec.Identities))
	}
	for _, e := range rec.Events {
		if e.ActorIdentityID != nil {
			t.Fatalf("seq %d carries actorIdentityId without its identity", e.Seq)
		}
	}
}

func TestExportMissingConversation(t *testing.T) {
	_, conn := juniortest.Database(t)
	var out bytes.Buffer
	_, err := (&Exporter{DB: conn}).Export(context.Background(), "slack:CNOPE:1.2", &out)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("error %v; want ErrNotFound", err)
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %d bytes for a missing conversation", out.Len())
	}
}

func TestSelectAndToDir(t *testing.T) {
	ctx := context.Background()
	_, conn := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	web, _ := juniortest.WebLaunch()
	juniortest.Insert(t, conn, slack)
	juniortest.Insert(t, conn, web)
	e := &Exporter{DB: conn}

	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{slack.ID, web.ID}},
		{"surface web", Filter{Surface: history.SurfaceWeb}, []string{web.ID}},
		{"surface slack", Filter{Surface: history.SurfaceSlack}, []string{slack.ID}},
		{"limit", Filter{Limit: 1}, []string{slack.ID}},
		{"since", Filter{Since: time.UnixMilli(1790800000000)}, []string{web.ID}},
		{"until", Filter{Until: time.UnixMilli(1790800000000)}, []string{slack.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Select(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v; want %v", got, tt.want)
			}
		})
	}

	dir := t.TempDir()
	var seen []string
	results, err := e.ToDir(ctx, []string{slack.ID, "local:web:missing", web.ID}, dir, func(done, total int, id string, _ *Result, err error) {
		seen = append(seen, id)
	})
	if !errors.Is(err, ErrNotFound) || len(results) != 2 || len(seen) != 3 {
		t.Fatalf("ToDir: %d results, progress %v, error %v; want 2, all three, ErrNotFound", len(results), seen, err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
		info, _ := en.Info()
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v; want 0600", en.Name(), info.Mode().Perm())
		}
	}
	want := []string{FileName(web.ID), FileName(slack.ID)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("files %v; want %v", names, want)
	}
	if FileName(slack.ID) != "slack_C0AGENTVCR_1790000001.000100.json" {
		t.Errorf("FileName(%q) = %q", slack.ID, FileName(slack.ID))
	}
}

func TestToDirLeavesNothingWhenTheDatabaseGoesAway(t *testing.T) {
	ctx := context.Background()
	url, conn := juniortest.Database(t)
	// Far more than the socket buffers hold, so the server is still sending
	// when it goes away.
	juniortest.Insert(t, conn, juniortest.Long(20000))
	id := juniortest.Long(1).ID
	other := pgtest.Connect(t, url)
	var pid uint32
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := &Exporter{DB: conn}
	killed := false
	err := atomicWriteHook(t, dir, func() {
		if !killed {
			killed = true
			if _, err := other.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
				t.Error(err)
			}
		}
	}, func(w io.Writer) error {
		_, err := e.Export(ctx, id, w)
		return err
	})
	if err == nil {
		t.Fatal("export succeeded although its connection was terminated")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v behind", entries)
	}
}

// atomicWriteHook runs write as ToDir does, into a file in dir, calling hook
// on every write that reaches the file.
func atomicWriteHook(t *testing.T, dir string, hook func(), write func(io.Writer) error) error {
	t.Helper()
	f, err := os.CreateTemp(dir, "x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = write(hookWriter{f, hook})
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, "out.json"))
}

type hookWriter struct {
	w    io.Writer
	hook func()
}

func (h hookWriter) Write(p []byte) (int, error) {
	h.hook()
	return h.w.Write(p)
}

func compactMetadata(t *testing.T, ids []history.Identity) []history.Identity {
	t.Helper()
	out := slices.Clone(ids)
	for i := range out {
		var buf bytes.Buffer
		if err := json.Compact(&buf, out[i].Metadata); err != nil {
			t.Fatal(err)
		}
		out[i].Metadata = buf.Bytes()
	}
	return out
}
