package loader

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/schema"
)

// ErrAlreadyLoaded is returned, with a Result, when the target conversation
// already holds exactly the rows the load would write. Nothing was written.
var ErrAlreadyLoaded = errors.New("already loaded")

// ErrConflict is returned when the target conversation exists with other
// rows than the load would write. Nothing was written.
var ErrConflict = errors.New("conversation already exists with a different history")

// ErrNeedConversationID is returned by Load when no conversation id was
// given and none can be derived without reading the input twice.
var ErrNeedConversationID = errors.New("no conversation id: give one, or load from a file")

// ErrNoConversation means an Append named a conversation the database
// lacks.
var ErrNoConversation = errors.New("no such conversation to append to")

// Options control one load.
type Options struct {
	// ConversationID is the id of the conversation to create. Empty means
	// derived: the source conversation id from the file's exporter stamp
	// (so a Slack thread keeps its slack:<channel>:<ts> id), or, when there
	// is none or the load is cut at a reply, "local:web:" and 24 hex digits
	// of a hash of the file and the cut.
	ConversationID string
	// ThroughReply loads only the rows a fork at this delivered reply
	// copies (history.CutAtReply).
	ThroughReply string
	// Append adds the rows to the existing conversation ConversationID
	// instead of creating one: they must continue it, the first at the
	// seq after its last row. It is for the time between turns: the load
	// does not take the product's own lock, so a turn writing at once
	// fails on the load's seqs or makes the load fail, writing nothing.
	Append bool
	// File names the input in errors.
	File string
	// Progress, if set, is told how many rows have been read so far:
	// every ProgressEvery rows and once at the end, from the goroutine
	// that called Load. A file streams, so its total is not known ahead.
	Progress func(rows int)
}

// ProgressEvery is how many rows pass between calls of Options.Progress.
const ProgressEvery = 1000

// Result describes one load.
type Result struct {
	File           string `json:"file,omitempty"`
	ConversationID string `json:"conversationId"`
	Status         string `json:"status"` // "loaded", "appended" or "already loaded"
	Events         int    `json:"events"`
	Identities     int    `json:"identities"`
	Skipped        int    `json:"skipped"` // rows of uncopied types
}

// Loader writes recorded history into one database.
type Loader struct {
	// DB is the connection the loader writes through.
	DB schema.Beginner
	// Profile is the product's schema; nil means the default profile.
	Profile *schema.Profile
}

// LoadFile loads the recorded history in the named file.
func (l *Loader) LoadFile(ctx context.Context, name string, opts Options) (*Result, error) {
	if opts.File == "" {
		opts.File = name
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if opts.ConversationID == "" {
		// Derived ids may need the file's hash: one extra read, cheap beside
		// the load, and memory stays flat.
		digest, err := fileDigest(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return l.load(ctx, f, opts, digest)
	}
	return l.Load(ctx, f, opts)
}

// Load loads the recorded history read from r. Without opts.ConversationID,
// r must carry an exporter stamp with the source conversation id, and
// opts.ThroughReply must be empty; otherwise Load returns
// ErrNeedConversationID.
func (l *Loader) Load(ctx context.Context, r io.Reader, opts Options) (*Result, error) {
	return l.load(ctx, r, opts, "")
}

func fileDigest(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (l *Loader) load(ctx context.Context, r io.Reader, opts Options, digest string) (*Result, error) {
	p := l.Profile
	if p == nil {
		var err error
		if p, err = schema.Lookup(""); err != nil {
			return nil, err
		}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	hr := history.NewReader(&ctxReader{ctx: ctx, r: r}, opts.File)
	h, err := hr.Header()
	if err != nil {
		return nil, err
	}
	rows := rowSource(hr, p)
	if opts.ThroughReply != "" {
		rec, err := readAll(hr, h, p)
		if err != nil {
			return nil, err
		}
		cut, err := history.CutAtReply(rec, opts.ThroughReply, p.Uncopied)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fileOr(opts.File), err)
		}
		rows = sliceSource(cut.Events)
	}
	id := opts.ConversationID
	if id == "" {
		switch {
		case opts.Append:
			return nil, fmt.Errorf("%s: %w", fileOr(opts.File), ErrNeedConversationID)
		case opts.ThroughReply == "" && h.Exporter != nil && h.Exporter.ConversationID != "":
			id = h.Exporter.ConversationID
		case digest != "":
			sum := sha256.Sum256([]byte("agentvcr load\x00" + digest + "\x00" + opts.ThroughReply))
			id = "local:web:" + hex.EncodeToString(sum[:12])
		default:
			return nil, fmt.Errorf("%s: %w", fileOr(opts.File), ErrNeedConversationID)
		}
	}
	if opts.Progress != nil {
		rows = counted(rows, opts.Progress)
	}
	res := &Result{File: opts.File, ConversationID: id}
	if err := l.write(ctx, p, h, rows, res, opts.Append); err != nil {
		return res, err
	}
	return res, nil
}

// source yields the rows to load, then io.EOF.
type source func() (history.Event, error)

// counted tells progress how many rows next has yielded, every
// ProgressEvery and at the end.
func counted(next source, progress func(int)) source {
	n := 0
	return func() (history.Event, error) {
		ev, err := next()
		switch {
		case err == io.EOF:
			progress(n)
		case err == nil:
			n++
			if n%ProgressEvery == 0 {
				progress(n)
			}
		}
		return ev, err
	}
}

// rowSource streams the reader's rows, skipping uncopied types.
func rowSource(hr *history.Reader, p *schema.Profile) source {
	return func() (history.Event, error) {
		for {
			ev, err := hr.Next()
			if err != nil || !p.Uncopied(ev.Type) {
				return ev, err
			}
		}
	}
}

func sliceSource(events []history.Event) source {
	return func() (history.Event, error) {
		if len(events) == 0 {
			return history.Event{}, io.EOF
		}
		ev := events[0]
		events = events[1:]
		return ev, nil
	}
}

func readAll(hr *history.Reader, h *history.Header, p *schema.Profile) (*history.Recording, error) {
	rec := &history.Recording{Header: *h}
	next := rowSource(hr, p)
	for {
		ev, err := next()
		if err == io.EOF {
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
		rec.Events = append(rec.Events, ev)
	}
}

func (l *Loader) write(ctx context.Context, p *schema.Profile, h *history.Header, next source, res *Result, appending bool) error {
	t := p.Tables
	tx, err := l.DB.Begin(ctx)
	if err != nil {
		return fmt.Errorf("load %s: %w", res.ConversationID, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	fail := func(err error) error {
		return fmt.Errorf("load %s into %s: %w", fileOr(res.File), res.ConversationID, explain(err))
	}
	// Loads of one id wait for each other, so two at once cannot both
	// find the conversation absent.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "agentvcr load "+res.ConversationID); err != nil {
		return fail(err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, p.SQL("SELECT EXISTS (SELECT 1 FROM {conversations} WHERE {conversations.conversation_id} = $1)"),
		res.ConversationID).Scan(&exists); err != nil {
		return fail(err)
	}
	first := int64(-1) // the seq an appended load must start at
	switch {
	case appending && !exists:
		return fail(fmt.Errorf("%w: load it without appending first", ErrNoConversation))
	case appending:
		if err := tx.QueryRow(ctx, p.SQL("SELECT coalesce(max({events.seq}), -1) + 1 FROM {events} WHERE {events.conversation_id} = $1"),
			res.ConversationID).Scan(&first); err != nil {
			return fail(err)
		}
	case exists:
		return l.compare(ctx, tx, p, next, res)
	}

	idmap, err := upsertIdentities(ctx, tx, p, h.Identities)
	if err != nil {
		return fail(err)
	}
	res.Identities = len(h.Identities)
	if !appending {
		if err := insertConversation(ctx, tx, p, h, res.ConversationID); err != nil {
			return fail(err)
		}
	}
	src := &copySource{next: next, id: res.ConversationID, idmap: idmap, file: res.File, firstUse: map[string]int64{}, first: first}
	var columns []string
	for _, c := range []string{"conversation_id", "seq", "history_version", "schema_version", "idempotency_key", "type", "payload", "actor_identity_id", "created_at"} {
		columns = append(columns, p.Column("events."+c))
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{t.Events}, columns, src)
	if err != nil {
		return src.rowError(err)
	}
	res.Events = int(n)
	res.Skipped = src.skipped
	switch {
	case n > 0 && appending:
		if _, err := tx.Exec(ctx, p.SQL(`UPDATE {conversations} SET
			{conversations.last_activity_at} = greatest({conversations.last_activity_at}, $2),
			{conversations.updated_at} = greatest({conversations.updated_at}, $2)
			WHERE {conversations.conversation_id} = $1`),
			res.ConversationID, time.UnixMilli(src.maxAt)); err != nil {
			return fail(err)
		}
	case n > 0:
		if _, err := tx.Exec(ctx, p.SQL(`UPDATE {conversations} SET {conversations.created_at} = $2,
			{conversations.last_activity_at} = $3, {conversations.updated_at} = $3
			WHERE {conversations.conversation_id} = $1`),
			res.ConversationID, time.UnixMilli(src.minAt), time.UnixMilli(src.maxAt)); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	res.Status = "loaded"
	if appending {
		res.Status = "appended"
	}
	return nil
}

// compare decides whether an existing conversation already holds the rows
// of this load: the same seqs with the same type, versions, key and time.
// Payloads are not compared: jsonb does not keep their bytes.
func (l *Loader) compare(ctx context.Context, tx pgx.Tx, p *schema.Profile, next source, res *Result) error {
	var want digest
	for {
		ev, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		want.add(ev.Seq, ev.Type, ev.HistoryVersion, ev.SchemaVersion, ev.IdempotencyKey, ev.CreatedAtMs)
	}
	rows, err := tx.Query(ctx, p.SQL(`SELECT {events.seq}, {events.type}, {events.history_version}, {events.schema_version},
		{events.idempotency_key}, {events.created_at} FROM {events} WHERE {events.conversation_id} = $1`), res.ConversationID)
	if err != nil {
		return err
	}
	var (
		have        digest
		seq, hv, sv int64
		typ         string
		key         *string
		createdAt   time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &typ, &hv, &sv, &key, &createdAt}, func() error {
		have.add(seq, typ, hv, sv, key, createdAt.UnixMilli())
		return nil
	})
	if err != nil {
		return err
	}
	if have != want {
		return fmt.Errorf("load %s into %s: %w (it has %d rows, the file %d): pick another id with --conversation-id",
			fileOr(res.File), res.ConversationID, ErrConflict, have.n, want.n)
	}
	res.Events = int(want.n)
	res.Status = "already loaded"
	return fmt.Errorf("%s into %s: %w", fileOr(res.File), res.ConversationID, ErrAlreadyLoaded)
}

// digest sums a hash of each row, so two sets of rows compare equal in any
// order.
type digest struct {
	n   int64
	sum uint64
}

func (d *digest) add(seq int64, typ string, hv, sv int64, key *string, createdAtMs int64) {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range []int64{seq, hv, sv, createdAtMs} {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	h.Write([]byte(typ))
	if key != nil {
		h.Write([]byte{1})
		h.Write([]byte(*key))
	}
	d.n++
	d.sum += h.Sum64()
}

func upsertIdentities(ctx context.Context, tx pgx.Tx, p *schema.Profile, ids []history.Identity) (map[string]string, error) {
	idmap := make(map[string]string, len(ids))
	for i, id := range ids {
		var userID *string
		if u := id.User; u != nil {
			var got string
			err := tx.QueryRow(ctx, p.SQL(`WITH ins AS (
					INSERT INTO {users} ({users.id}, {users.primary_email}, {users.primary_email_normalized}, {users.display_name},
						{users.timezone}, {users.is_admin}, {users.created_at}, {users.updated_at})
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING {users.id})
				SELECT {users.id} FROM ins UNION ALL
				(SELECT {users.id} FROM {users} WHERE {users.id} = $1 OR {users.primary_email_normalized} = $3
					ORDER BY {users.id} = $1 DESC LIMIT 1)
				LIMIT 1`),
				u.ID, u.PrimaryEmail, u.PrimaryEmailNormalized, u.DisplayName, u.Timezone, u.IsAdmin,
				time.UnixMilli(u.CreatedAtMs), time.UnixMilli(u.UpdatedAtMs)).Scan(&got)
			if err != nil {
				return nil, fmt.Errorf("identities[%d] (%s): user %s: %w", i, id.ID, u.ID, err)
			}
			userID = &got
		}
		var metadata []byte
		if len(id.Metadata) > 0 {
			metadata = id.Metadata
		}
		var got string
		err := tx.QueryRow(ctx, p.SQL(`INSERT INTO {identities} AS cur ({identities.id}, {identities.kind}, {identities.provider},
				{identities.provider_tenant_id}, {identities.provider_subject_id}, {identities.display_name}, {identities.handle},
				{identities.email}, {identities.avatar_url}, {identities.metadata_json}, {identities.created_at},
				{identities.updated_at}, {identities.user_id}, {identities.email_normalized}, {identities.email_verified})
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			ON CONFLICT ({identities.provider}, {identities.provider_tenant_id}, {identities.provider_subject_id}) DO UPDATE SET
				{identities.display_name} = EXCLUDED.{identities.display_name}, {identities.handle} = EXCLUDED.{identities.handle},
				{identities.email} = EXCLUDED.{identities.email}, {identities.avatar_url} = EXCLUDED.{identities.avatar_url},
				{identities.metadata_json} = EXCLUDED.{identities.metadata_json},
				{identities.user_id} = coalesce(EXCLUDED.{identities.user_id}, cur.{identities.user_id}),
				{identities.email_normalized} = EXCLUDED.{identities.email_normalized},
				{identities.email_verified} = EXCLUDED.{identities.email_verified},
				{identities.updated_at} = greatest(cur.{identities.updated_at}, EXCLUDED.{identities.updated_at})
			RETURNING {identities.id}`),
			id.ID, id.Kind, id.Provider, id.ProviderTenantID, id.ProviderSubjectID,
			id.DisplayName, id.Handle, id.Email, id.AvatarURL, metadata,
			time.UnixMilli(id.CreatedAtMs), time.UnixMilli(id.UpdatedAtMs), userID,
			id.EmailNormalized, id.EmailVerified).Scan(&got)
		if err != nil {
			return nil, fmt.Errorf("identities[%d] (%s): %w", i, id.ID, err)
		}
		idmap[id.ID] = got
	}
	return idmap, nil
}

// insertConversation creates the conversation row with every NOT NULL
// column filled, and the source and destination a product needs to find
// it again: a Slack thread for slack:<channel>:<ts> ids, else a web root.
func insertConversation(ctx context.Context, tx pgx.Tx, p *schema.Profile, h *history.Header, id string) error {
	source := string(h.Surface)
	var src, dst map[string]any
	if channel, ts, ok := slackThread(id); ok {
		src = map[string]any{"platform": "slack", "channelId": channel, "threadTs": ts}
		dst = map[string]any{"platform": "slack", "channelId": channel}
		if team := slackTeam(h.Identities); team != "" {
			src["teamId"], dst["teamId"] = team, team
		}
	} else {
		src = map[string]any{"platform": "web", "conversationId": id, "visibility": "private"}
		dst = map[string]any{"platform": "local", "conversationId": id}
	}
	srcJSON, err := json.Marshal(src)
	if err != nil {
		return err
	}
	dstJSON, err := json.Marshal(dst)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, p.SQL(`INSERT INTO {conversations} ({conversations.conversation_id}, {conversations.schema_version},
			{conversations.source}, {conversations.source_json}, {conversations.destination_json}, {conversations.created_at},
			{conversations.last_activity_at}, {conversations.updated_at}, {conversations.execution_status},
			{conversations.duration_ms}, {conversations.execution_duration_ms})
		VALUES ($1, 1, $2, $3, $4, now(), now(), now(), 'idle', 0, 0)`),
		id, source, srcJSON, dstJSON)
	return err
}

func slackThread(id string) (channel, ts string, ok bool) {
	parts := strings.Split(id, ":")
	if len(parts) != 3 || parts[0] != "slack" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

func slackTeam(ids []history.Identity) string {
	for _, id := range ids {
		if id.Provider == "slack" && id.ProviderTenantID != "" {
			return id.ProviderTenantID
		}
	}
	return ""
}

// copySource feeds COPY from the rows of a load.
type copySource struct {
	next     source
	id       string
	file     string
	idmap    map[string]string
	vals     []any
	seqs     []int64          // seq of each row sent, to name a row COPY rejects
	firstUse map[string]int64 // first seq naming each actor identity the file does not carry
	first    int64            // the seq the first row must have, or -1
	skipped  int
	minAt    int64
	maxAt    int64
	err      error
}

func (s *copySource) Next() bool {
	ev, err := s.next()
	if err != nil {
		if err != io.EOF {
			s.err = err
		}
		return false
	}
	if len(s.seqs) == 0 && s.first >= 0 && ev.Seq != s.first {
		s.err = &history.RowError{File: s.file, Index: -1, Seq: ev.Seq, Field: "seq",
			Err: fmt.Errorf("appended rows must start at seq %d, after the last row of %s", s.first, s.id)}
		return false
	}
	var actor *string
	if ev.ActorIdentityID != nil {
		a := *ev.ActorIdentityID
		if mapped, ok := s.idmap[a]; ok {
			a = mapped
		} else if _, seen := s.firstUse[a]; !seen {
			s.firstUse[a] = ev.Seq
		}
		actor = &a
	}
	if len(s.seqs) == 0 || ev.CreatedAtMs < s.minAt {
		s.minAt = ev.CreatedAtMs
	}
	if len(s.seqs) == 0 || ev.CreatedAtMs > s.maxAt {
		s.maxAt = ev.CreatedAtMs
	}
	s.seqs = append(s.seqs, ev.Seq)
	s.vals = append(s.vals[:0], s.id, int32(ev.Seq), int32(ev.HistoryVersion), int32(ev.SchemaVersion),
		ev.IdempotencyKey, ev.Type, []byte(ev.Payload), actor, time.UnixMilli(ev.CreatedAtMs))
	return true
}

func (s *copySource) Values() ([]any, error) { return s.vals, nil }
func (s *copySource) Err() error             { return s.err }

var copyLine = regexp.MustCompile(`COPY \S+, line (\d+)(?:, column (\w+))?`)

// rowError names the row behind a failed COPY: from the line number the
// server reports, or, for a foreign key checked at the end, from the
// identity it names.
func (s *copySource) rowError(err error) error {
	if s.err != nil {
		// The reader's own error (it names the row) made pgx abort the COPY.
		return s.err
	}
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return fmt.Errorf("load %s into %s: %w", fileOr(s.file), s.id, err)
	}
	re := &history.RowError{File: s.file, Index: -1, Seq: -1, Err: explain(err)}
	if m := copyLine.FindStringSubmatch(pg.Where); m != nil {
		// The line counts the rows sent, not the file's rows (uncopied ones
		// are skipped), so the seq names the row.
		if line, _ := strconv.Atoi(m[1]); line >= 1 && line <= len(s.seqs) {
			re.Seq = s.seqs[line-1]
		}
		re.Field = fieldOf(m[2])
	}
	if pg.Code == "23503" && strings.Contains(pg.Detail, "actor_identity_id") {
		re.Field = "actorIdentityId"
		for actor, seq := range s.firstUse {
			if strings.Contains(pg.Detail, "("+actor+")") {
				re.Seq = seq
				re.Err = fmt.Errorf("actorIdentityId %q is neither in the file's identities nor in the database: %w", actor, err)
			}
		}
	}
	if pg.Code == "23505" {
		switch {
		case strings.Contains(pg.ConstraintName, "idempotency"):
			re.Field = "idempotencyKey"
		case strings.Contains(pg.ConstraintName, "pk"):
			re.Field = "seq"
		}
	}
	return fmt.Errorf("load into %s: %w", s.id, re)
}

func fieldOf(column string) string {
	switch column {
	case "seq":
		return "seq"
	case "history_version":
		return "historyVersion"
	case "schema_version":
		return "schemaVersion"
	case "idempotency_key":
		return "idempotencyKey"
	case "actor_identity_id":
		return "actorIdentityId"
	case "created_at":
		return "createdAtMs"
	}
	return column
}

// explain adds what to do to the database errors a user can fix.
func explain(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "42P01" {
		return fmt.Errorf("%w: the database lacks the product's tables; create them with `recorder schema --apply`", err)
	}
	return err
}

func fileOr(name string) string {
	if name == "" {
		return "<input>"
	}
	return name
}

// ctxReader makes a blocking reader, such as a pipe, give up when ctx is
// done: the read runs in its own goroutine, into its own buffer, and is
// abandoned on cancellation. The buffer is used again for the next read
// when the last one finished; an abandoned read keeps its own.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if cap(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	c.buf = nil // the read's until it is done
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case res := <-done:
		c.buf = buf
		return copy(p, buf[:res.n]), res.err
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	}
}
