package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
)

// Filter selects conversations for a bulk export. Zero fields select
// everything.
type Filter struct {
	// Since and Until bound the conversation's last activity: Since
	// inclusive, Until exclusive.
	Since, Until time.Time
	// Surface keeps only conversations delivered to that surface.
	Surface history.Surface
	// Limit caps the number of conversations; 0 means no cap.
	Limit int
}

// Select returns the ids of the conversations that match f, oldest last
// activity first.
func (e *Exporter) Select(ctx context.Context, f Filter) ([]string, error) {
	p, err := e.profile()
	if err != nil {
		return nil, err
	}
	var since, until *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	if !f.Until.IsZero() {
		until = &f.Until
	}
	var limit *int
	if f.Limit > 0 {
		limit = &f.Limit
	}
	tx, err := e.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("select conversations: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, p.SQL(`SELECT {conversations.conversation_id} FROM {conversations}
		WHERE ($1::timestamptz IS NULL OR {conversations.last_activity_at} >= $1)
		AND ($2::timestamptz IS NULL OR {conversations.last_activity_at} < $2)
		AND ($3 = '' OR `+surfaceExpr+` = $3)
		ORDER BY {conversations.last_activity_at}, {conversations.conversation_id} LIMIT $4`),
		since, until, string(f.Surface), limit)
	if err != nil {
		return nil, fmt.Errorf("select conversations: %w", explain(err, p))
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("select conversations: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("select conversations: %w", err)
	}
	return ids, nil
}

// Progress is told about each conversation a bulk export finishes: how many
// are done of how many, and the result or error of this one.
type Progress func(done, total int, id string, res *Result, err error)

// ToDir exports each conversation to its own file in dir, named by
// FileName, written atomically with FileMode. A missing conversation is reported and skipped; any other error
// stops the export. The returned error joins every failure.
func (e *Exporter) ToDir(ctx context.Context, ids []string, dir string, progress Progress) ([]*Result, error) {
	var (
		results []*Result
		errs    []error
	)
	names := map[string]bool{}
	for i, id := range ids {
		name := FileName(id)
		if names[name] {
			name = strings.TrimSuffix(name, ".json") + "-" + shortHash(id) + ".json"
		}
		names[name] = true
		var res *Result
		path := filepath.Join(dir, name)
		mode := e.FileMode
		if mode == 0 {
			mode = 0o600
		}
		err := atomicfile.Write(path, mode, func(w io.Writer) error {
			var err error
			res, err = e.Export(ctx, id, w)
			return err
		})
		if err == nil {
			res.File = path
		} else {
			res = nil
		}
		if progress != nil {
			progress(i+1, len(ids), id, res, err)
		}
		if err != nil {
			errs = append(errs, err)
			if !errors.Is(err, ErrNotFound) {
				break
			}
			continue
		}
		results = append(results, res)
	}
	return results, errors.Join(errs...)
}

// FileName returns the file name a bulk export gives conversation id: the
// id with every character other than letters, digits, '.', '_' and '-'
// replaced by '_', and ".json".
func FileName(id string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, id)
	if strings.Trim(name, ".") == "" {
		name = "conversation-" + shortHash(id)
	}
	return name + ".json"
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
