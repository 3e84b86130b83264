package export_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/export"
	"github.com/agentvcr/agentvcr/sanitize"
)

// Export last week's conversations from the product's database, one file
// each, sanitized in memory before anything is written, as
// `recorder export --since 7d --out-dir recordings/ --sanitize` does. It
// needs a database, so it is compiled, not run.
func ExampleExporter_ToDir() {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv("DATABASE_URL")) // read only: export never writes
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)

	s, err := sanitize.New(sanitize.Options{Key: []byte(os.Getenv("AGENTVCR_SANITIZE_KEY"))})
	if err != nil {
		log.Fatal(err)
	}
	e := &export.Exporter{
		DB:             conn,
		WithIdentities: true, // so the sanitizer learns every name to hunt for
		FileMode:       0o644,
		// Raw personal data never reaches the disk: a document the
		// sanitizer refuses is not written at all.
		Transform: func(doc []byte, id string) ([]byte, error) {
			if err := s.Learn(doc, id); err != nil {
				return nil, err
			}
			return s.Sanitize(doc, id)
		},
	}
	ids, err := e.Select(ctx, export.Filter{Since: time.Now().Add(-7 * 24 * time.Hour)})
	if err != nil {
		log.Fatal(err)
	}
	results, err := e.ToDir(ctx, ids, "recordings", nil)
	fmt.Printf("%d of %d conversations written\n", len(results), len(ids))
	if err != nil {
		log.Fatal(err)
	}
}
