package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/export"
	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/schema"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// eventRows returns every column but conversation_id of the conversation's
// event rows, in seq order, payload as jsonb text.
func eventRows(t *testing.T, conn *pgx.Conn, id string) [][]any {
	t.Helper()
	return rowValues(t, conn, `SELECT seq, history_version, schema_version, idempotency_key, type,
		payload::text, actor_identity_id, created_at FROM junior_conversation_events WHERE conversation_id = $1 ORDER BY seq`, id)
}

func identityRows(t *testing.T, conn *pgx.Conn, ids []history.Identity) [][]any {
	t.Helper()
	var keys []string
	for _, id := range ids {
		keys = append(keys, id.ID)
	}
	return rowValues(t, conn, `SELECT i.*, u.* FROM junior_identities i
		LEFT JOIN junior_users u ON u.id = i.user_id WHERE i.id = ANY($1) ORDER BY i.id`, keys)
}

// rowValues returns every row of a query as its column values.
func rowValues(t *testing.T, conn *pgx.Conn, sql string, args ...any) [][]any {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([]any, error) { return r.Values() })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, conn *pgx.Conn, query string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func exportTo(t *testing.T, conn *pgx.Conn, id string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), export.FileName(id))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := (&export.Exporter{DB: conn, WithIdentities: true}).Export(context.Background(), id, f); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRoundTripThroughExportAndLoad(t *testing.T) {
	ctx := context.Background()
	_, src := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	web, _ := juniortest.WebLaunch()
	for _, c := range []*juniortest.Conversation{slack, web} {
		juniortest.Insert(t, src, c)
	}
	for _, c := range []*juniortest.Conversation{slack, web} {
		t.Run(c.ID, func(t *testing.T) {
			_, dst := juniortest.Database(t)
			file := exportTo(t, src, c.ID)
			l := &Loader{DB: dst}
			res, err := l.LoadFile(ctx, file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.ConversationID != c.ID || res.Status != "loaded" {
				t.Fatalf("result %+v; want the source id, loaded", res)
			}
			want := eventRows(t, src, c.ID)
			want = slices.DeleteFunc(want, func(r []any) bool { return juniortest.Uncopied(r[4].(string)) })
			if len(want) == len(c.Events) {
				t.Fatal("the sample has no uncopied rows to drop")
			}
			if got := eventRows(t, dst, c.ID); !reflect.DeepEqual(got, want) {
				t.Fatalf("loaded rows differ from the source's copied rows:\n got %v\nwant %v", got, want)
			}
			if res.Events != len(want) || res.Identities != len(c.Identities) {
				t.Errorf("result counts %+v; want %d events, %d identities", res, len(want), len(c.Identities))
			}
			if got, want := identityRows(t, dst, c.Identities), identityRows(t, src, c.Identities); !reflect.DeepEqual(got, want) {
				t.Errorf("identities differ:\n got %v\nwant %v", got, want)
			}

			// Under another id: the same rows, only the conversation id differs.
			res, err = l.LoadFile(ctx, file, Options{ConversationID: "local:web:copy"})
			if err != nil {
				t.Fatal(err)
			}
			if res.ConversationID != "local:web:copy" {
				t.Fatalf("loaded as %q; want the id given", res.ConversationID)
			}
			if got := eventRows(t, dst, "local:web:copy"); !reflect.DeepEqual(got, want) {
				t.Fatal("rows under another id differ")
			}
			var created, last time.Time
			var status string
			if err := dst.QueryRow(ctx, `SELECT created_at, last_activity_at, execution_status FROM junior_conversations
				WHERE conversation_id = 'local:web:copy'`).Scan(&created, &last, &status); err != nil {
				t.Fatal(err)
			}
			if !created.Before(last) || status != "idle" {
				t.Errorf("conversation row: created %v, last activity %v, status %q", created, last, status)
			}
		})
	}
}

func TestSlackConversationKeepsThread(t *testing.T) {
	ctx := context.Background()
	_, src := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	juniortest.Insert(t, src, slack)
	_, dst := juniortest.Database(t)
	if _, err := (&Loader{DB: dst}).LoadFile(ctx, exportTo(t, src, slack.ID), Options{}); err != nil {
		t.Fatal(err)
	}
	var source, sourceJSON, destJSON string
	if err := dst.QueryRow(ctx, `SELECT source, source_json::text, destination_json::text FROM junior_conversations
		WHERE conversation_id = $1`, slack.ID).Scan(&source, &sourceJSON, &destJSON); err != nil {
		t.Fatal(err)
	}
	if source != "slack" || !strings.Contains(sourceJSON, `"threadTs": "1790000001.000100"`) ||
		!strings.Contains(sourceJSON, `"teamId": "T0AGENTVCR"`) || !strings.Contains(destJSON, `"channelId": "C0AGENTVCR"`) {
		t.Fatalf("source %q, source_json %s, destination_json %s", source, sourceJSON, destJSON)
	}
}

func TestJuniorRecordingLoadsAndExportsBack(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", "launch-planning.json")
	in, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, db := juniortest.Database(t)
	res, err := (&Loader{DB: db}).LoadFile(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.ConversationID, "local:web:") || res.Events != 37 {
		t.Fatalf("result %+v", res)
	}
	var out bytes.Buffer
	if _, err := (&export.Exporter{DB: db}).Export(ctx, res.ConversationID, &out); err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	delete(got, "exporter")
	if !reflect.DeepEqual(got, want) {
		t.Fatal("exported document differs from the recording as JSON")
	}
}

func TestLoadThroughReply(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", "launch-planning.json")
	_, db := juniortest.Database(t)
	l := &Loader{DB: db}
	res, err := l.LoadFile(ctx, path, Options{ThroughReply: "turn_api-msg_d9e0b97e7ec457e879680bc9:assistant:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND seq <= 26`, res.ConversationID); got != 27 || res.Events != 27 {
		t.Fatalf("%d rows through seq 26, %d loaded; want 27", got, res.Events)
	}
	full, err := l.LoadFile(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if full.ConversationID == res.ConversationID {
		t.Fatal("the cut and the whole file derived the same conversation id")
	}
	_, err = l.LoadFile(ctx, path, Options{ThroughReply: "nope"})
	if !errors.Is(err, history.ErrReplyNotFound) {
		t.Fatalf("error %v; want ErrReplyNotFound", err)
	}
}

func TestLoadThroughReplySkipsTheProfilesUncopiedTypes(t *testing.T) {
	// A product whose fork also leaves turn_routed rows behind: the cut
	// follows its profile, not Junior's list.
	junior, err := schema.Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	other := *junior
	other.Name = "junior-without-routing"
	other.UncopiedTypes = append(slices.Clone(junior.UncopiedTypes), "turn_routed")
	_, db := juniortest.Database(t)
	res, err := (&Loader{DB: db, Profile: &other}).LoadFile(context.Background(), filepath.Join("testdata", "launch-planning.json"),
		Options{ThroughReply: "turn_api-msg_d9e0b97e7ec457e879680bc9:assistant:1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, `SELECT count(*) FROM junior_conversation_events WHERE conversation_id = $1 AND type = 'turn_routed'`, res.ConversationID); n != 0 || res.Events != 25 {
		t.Fatalf("%d turn_routed rows, %d rows loaded; want none of 2, and 25", n, res.Events)
	}
}

func TestLoadTwiceIsAlreadyLoaded(t *testing.T) {
	ctx := context.Background()
	_, src := juniortest.Database(t)
	web, _ := juniortest.WebLaunch()
	juniortest.Insert(t, src, web)
	file := exportTo(t, src, web.ID)
	_, dst := juniortest.Database(t)
	l := &Loader{DB: dst}
	first, err := l.LoadFile(ctx, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := l.LoadFile(ctx, file, Options{})
	if !errors.Is(err, ErrAlreadyLoaded) {
		t.Fatalf("second load: %v; want ErrAlreadyLoaded", err)
	}
	if second.Status != "already loaded" || second.ConversationID != first.ConversationID || second.Events != first.Events {
		t.Fatalf("second result %+v; first %+v", second, first)
	}
	if n := count(t, dst, "SELECT count(*) FROM junior_conversation_events"); n != first.Events {
		t.Fatalf("%d rows after two loads; want %d", n, first.Events)
	}

	// A different history under the same id is refused, not merged.
	slack, _ := juniortest.SlackThread()
	juniortest.Insert(t, src, slack)
	_, err = l.LoadFile(ctx, exportTo(t, src, slack.ID), Options{ConversationID: web.ID})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "--conversation-id") {
		t.Fatalf("error %v; want ErrConflict saying what to do", err)
	}
	if n := count(t, dst, "SELECT count(*) FROM junior_conversation_events"); n != first.Events {
		t.Fatalf("%d rows after a refused load; want %d", n, first.Events)
	}
}

// fileWith writes the Slack sample with row index i changed by change.
func fileWith(t *testing.T, i int, change func(*history.Event)) (string, *history.Recording) {
	t.Helper()
	h, events := copiedOf(juniortest.Long(60))
	rec := &history.Recording{Header: h, Events: events}
	change(&rec.Events[i])
	path := filepath.Join(t.TempDir(), "bad.json")
	var buf bytes.Buffer
	if err := history.Write(&buf, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, rec
}

func TestLoadRollsBackOnBadRow(t *testing.T) {
	ghost := "no-such-identity"
	tests := []struct {
		name   string
		change func(*history.Event)
		field  string
		reason string
	}{
		{"repeated idempotency key", func(e *history.Event) { k := "message:1790000001.000100"; e.IdempotencyKey = &k }, "idempotencyKey", "duplicate key"},
		{"NUL in payload", func(e *history.Event) { e.Payload = json.RawMessage(`{"text":"a\u0000b"}`) }, "payload", "unsupported Unicode escape"},
		{"unknown actor", func(e *history.Event) { e.ActorIdentityID = &ghost }, "actorIdentityId", ghost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, rec := fileWith(t, 29, tt.change)
			_, db := juniortest.Database(t)
			_, err := (&Loader{DB: db}).LoadFile(context.Background(), path, Options{ConversationID: "local:web:bad"})
			var re *history.RowError
			if !errors.As(err, &re) {
				t.Fatalf("error %T %v; want a *history.RowError", err, err)
			}
			if re.Seq != rec.Events[29].Seq || re.Field != tt.field || re.File != path {
				t.Errorf("RowError{File %q, Seq %d, Field %q}; want {%q, %d, %q}", re.File, re.Seq, re.Field, path, rec.Events[29].Seq, tt.field)
			}
			if !strings.Contains(err.Error(), tt.reason) || !strings.Contains(err.Error(), fmt.Sprintf("row seq %d", rec.Events[29].Seq)) {
				t.Errorf("error %q lacks %q or the seq", err, tt.reason)
			}
			assertEmpty(t, db)
		})
	}
}

func TestLoadRejectsInvalidRowMidStream(t *testing.T) {
	path, rec := fileWith(t, 29, func(e *history.Event) { e.Payload = json.RawMessage(`{}`) })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Make row 29 invalid in a way only the reader sees: a string seq.
	needle := fmt.Sprintf(`"seq": %d,`, rec.Events[29].Seq)
	data = bytes.Replace(data, []byte(needle), []byte(fmt.Sprintf(`"seq": "%d",`, rec.Events[29].Seq)), 1)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, db := juniortest.Database(t)
	_, err = (&Loader{DB: db}).LoadFile(context.Background(), path, Options{})
	var re *history.RowError
	if !errors.As(err, &re) || re.Index != 29 || re.Field != "seq" || !errors.Is(err, history.ErrInvalid) {
		t.Fatalf("error %v; want an invalid-input RowError at events[29], field seq", err)
	}
	assertEmpty(t, db)
}

func TestLoadCancelledWritesNothing(t *testing.T) {
	path, _ := fileWith(t, 0, func(*history.Event) {})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, db := juniortest.Database(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := (&Loader{DB: db}).Load(ctx, pr, Options{ConversationID: "local:web:cancelled"})
		done <- err
	}()
	// Send half the file, then cancel while the load waits for the rest.
	// A pipe's Write returns once the load has read it all.
	if _, err := pw.Write(data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("load did not return after its context was cancelled")
	}
	pw.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v; want context.Canceled", err)
	}
	assertEmpty(t, pgtest.Connect(t, db.Config().ConnString()))
}

func TestLoadIntoDatabaseWithoutSchema(t *testing.T) {
	path, _ := fileWith(t, 0, func(*history.Event) {})
	conn := pgtest.Connect(t, pgtest.NewDatabase(t))
	_, err := (&Loader{DB: conn}).LoadFile(context.Background(), path, Options{})
	if err == nil || !strings.Contains(err.Error(), "recorder schema --apply") {
		t.Fatalf("error %v; want a hint to apply the schema", err)
	}
}

func TestLoadFromReaderNeedsAnID(t *testing.T) {
	path := filepath.Join("testdata", "launch-planning.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, db := juniortest.Database(t)
	_, err = (&Loader{DB: db}).Load(context.Background(), f, Options{File: path})
	if !errors.Is(err, ErrNeedConversationID) {
		t.Fatalf("error %v; want ErrNeedConversationID", err)
	}
}

func assertEmpty(t *testing.T, db *pgx.Conn) {
	t.Helper()
	for _, table := range []string{"junior_conversations", "junior_conversation_events", "junior_identities", "junior_users"} {
		if n := count(t, db, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%s has %d rows after a failed load; want none", table, n)
		}
	}
}

func TestLoadReportsProgress(t *testing.T) {
	conv := juniortest.Long(2500)
	rec := &history.Recording{Header: history.Header{Version: 1, Surface: conv.Surface, Identities: conv.Identities}, Events: conv.Events}
	var buf bytes.Buffer
	if err := history.Write(&buf, rec); err != nil {
		t.Fatal(err)
	}
	_, db := juniortest.Database(t)
	var got []int
	res, err := (&Loader{DB: db}).Load(context.Background(), &buf, Options{ConversationID: "local:web:progress",
		Progress: func(rows int) { got = append(got, rows) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events < 2*ProgressEvery {
		t.Fatalf("%d rows: too few to show progress", res.Events)
	}
	var want []int
	for n := ProgressEvery; n <= res.Events; n += ProgressEvery {
		want = append(want, n)
	}
	want = append(want, res.Events)
	if !slices.Equal(got, want) {
		t.Fatalf("progress %v; want %v", got, want)
	}
}

func TestAProfileWithOtherNamesLoadsAndExports(t *testing.T) {
	// A product with Junior's rows under other table and column names: the
	// profile maps them, and load then export gives back what went in.
	ctx := context.Background()
	_, src := juniortest.Database(t)
	slack, _ := juniortest.SlackThread()
	juniortest.Insert(t, src, slack)
	file := exportTo(t, src, slack.ID)

	junior, err := schema.Lookup("junior")
	if err != nil {
		t.Fatal(err)
	}
	other := *junior
	other.Name = "renamed"
	other.Tables.Events, other.Tables.Users = "events", "people"
	other.Columns = map[string]string{
		"events.seq": "event_seq", "events.payload": "body", "events.actor_identity_id": "actor",
		"identities.provider_subject_id": "subject", "identities.user_id": "person_id",
		"users.id": "person_id", "users.primary_email": "email",
		"conversations.last_activity_at": "active_at", "conversations.conversation_id": "id",
	}
	if err := other.Check(); err != nil {
		t.Fatal(err)
	}
	url := pgtest.NewDatabase(t)
	dst := pgtest.Connect(t, url)
	if _, err := dst.Exec(ctx, junior.DDL+`;
		ALTER TABLE junior_conversation_events RENAME TO events;
		ALTER TABLE events RENAME COLUMN seq TO event_seq;
		ALTER TABLE events RENAME COLUMN payload TO body;
		ALTER TABLE events RENAME COLUMN actor_identity_id TO actor;
		ALTER TABLE junior_users RENAME TO people;
		ALTER TABLE people RENAME COLUMN id TO person_id;
		ALTER TABLE people RENAME COLUMN primary_email TO email;
		ALTER TABLE junior_identities RENAME COLUMN provider_subject_id TO subject;
		ALTER TABLE junior_identities RENAME COLUMN user_id TO person_id;
		ALTER TABLE junior_conversations RENAME COLUMN last_activity_at TO active_at;
		ALTER TABLE junior_conversations RENAME COLUMN conversation_id TO id`); err != nil {
		t.Fatal(err)
	}
	res, err := (&Loader{DB: dst, Profile: &other}).LoadFile(ctx, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex := &export.Exporter{DB: dst, Profile: &other, WithIdentities: true}
	ids, err := ex.Select(ctx, export.Filter{Since: time.UnixMilli(0)})
	if err != nil || len(ids) != 1 || ids[0] != slack.ID {
		t.Fatalf("select: %v %v", ids, err)
	}
	var out bytes.Buffer
	if _, err := ex.Export(ctx, res.ConversationID, &out); err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader) *history.Recording {
		t.Helper()
		rec, err := history.Read(r, "export")
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	in, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	want, got := read(in), read(&out)
	if !reflect.DeepEqual(got.Events, want.Events) || !reflect.DeepEqual(got.Identities, want.Identities) || len(got.Identities) == 0 {
		t.Fatalf("load then export under other names changed the conversation:\n got %+v\nwant %+v", got, want)
	}
	if _, err := (&Loader{DB: dst, Profile: &other}).LoadFile(ctx, file, Options{}); !errors.Is(err, ErrAlreadyLoaded) {
		t.Fatalf("the second load: %v; want already loaded", err)
	}
}

// doc writes events as a recorded-history document.
func doc(t *testing.T, h history.Header, events []history.Event) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	if err := history.Write(&buf, &history.Recording{Header: h, Events: events}); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// copiedOf is a conversation's header and the rows a load copies.
func copiedOf(conv *juniortest.Conversation) (history.Header, []history.Event) {
	var events []history.Event
	for _, e := range conv.Events {
		if !juniortest.Uncopied(e.Type) {
			events = append(events, e)
		}
	}
	return history.Header{Version: 1, Surface: conv.Surface, Identities: conv.Identities}, events
}

func TestAppendContinuesAConversation(t *testing.T) {
	ctx := context.Background()
	h, events := copiedOf(juniortest.Long(60))
	cut := len(events) / 2
	_, db := juniortest.Database(t)
	l := &Loader{DB: db}
	if _, err := l.Load(ctx, doc(t, h, events), Options{ConversationID: "local:web:whole"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Load(ctx, doc(t, h, events[:cut]), Options{ConversationID: "local:web:halves"}); err != nil {
		t.Fatal(err)
	}
	res, err := l.Load(ctx, doc(t, h, events[cut:]), Options{ConversationID: "local:web:halves", Append: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "appended" || res.Events != len(events)-cut {
		t.Fatalf("result %+v; want %d rows appended", res, len(events)-cut)
	}
	if whole, halves := eventRows(t, db, "local:web:whole"), eventRows(t, db, "local:web:halves"); !reflect.DeepEqual(whole, halves) {
		t.Fatalf("loaded in two halves, the rows differ from one load:\n%v\n%v", halves, whole)
	}
	var active, whole time.Time
	db.QueryRow(ctx, "SELECT last_activity_at FROM junior_conversations WHERE conversation_id = 'local:web:halves'").Scan(&active)
	db.QueryRow(ctx, "SELECT last_activity_at FROM junior_conversations WHERE conversation_id = 'local:web:whole'").Scan(&whole)
	if !active.Equal(whole) {
		t.Fatalf("last activity %s after the append; want the last row's %s", active, whole)
	}
}

func TestAppendRefusesWhatDoesNotContinue(t *testing.T) {
	ctx := context.Background()
	h, events := copiedOf(juniortest.Long(20))
	_, db := juniortest.Database(t)
	l := &Loader{DB: db}

	_, err := l.Load(ctx, doc(t, h, events), Options{ConversationID: "local:web:none", Append: true})
	if !errors.Is(err, ErrNoConversation) || !strings.Contains(err.Error(), "local:web:none") {
		t.Fatalf("append to a missing conversation: %v; want ErrNoConversation naming it", err)
	}
	assertEmpty(t, db)
	if _, err := l.Load(ctx, doc(t, h, events), Options{Append: true}); !errors.Is(err, ErrNeedConversationID) {
		t.Fatalf("append without an id: %v; want ErrNeedConversationID", err)
	}

	if _, err := l.Load(ctx, doc(t, h, events), Options{ConversationID: "local:web:c"}); err != nil {
		t.Fatal(err)
	}
	before := eventRows(t, db, "local:web:c")
	// The same rows again start where the conversation began, not after it.
	_, err = l.Load(ctx, doc(t, h, events), Options{ConversationID: "local:web:c", Append: true, File: "again.json"})
	var re *history.RowError
	if !errors.As(err, &re) || re.Field != "seq" || re.Seq != events[0].Seq || re.File != "again.json" ||
		!strings.Contains(err.Error(), fmt.Sprintf("start at seq %d", events[len(events)-1].Seq+1)) {
		t.Fatalf("append of rows that do not follow: %v; want a seq RowError saying where to start", err)
	}
	if after := eventRows(t, db, "local:web:c"); !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused append changed the rows")
	}
}
