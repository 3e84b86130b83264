package loader_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/export"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/loader"
	"github.com/agentvcr/agentvcr/schema"
)

// Load a recorded conversation into a test database the way the product's
// fork copies rows, then export it back as recorded history.
func Example() {
	ctx := context.Background()
	dbURL, drop := testDatabase(ctx) // your test database
	defer drop()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close(ctx)
	junior, err := schema.Lookup("junior")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := conn.Exec(ctx, junior.DDL); err != nil { // recorder schema --apply
		log.Fatal(err)
	}

	res, err := (&loader.Loader{DB: conn, Profile: junior}).LoadFile(ctx, "testdata/launch-planning.json", loader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("loaded %s: %d rows, %d identities\n", res.ConversationID, res.Events, res.Identities)

	out, err := (&export.Exporter{DB: conn, Profile: junior}).Export(ctx, res.ConversationID, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("exported %s: %d rows, %s\n", out.ConversationID, out.Events, out.Surface)
	// Output:
	// loaded local:web:d5fb10d466bf20956ad4f2a7: 37 rows, 0 identities
	// exported local:web:d5fb10d466bf20956ad4f2a7: 37 rows, web
}

// testDatabase stands for the database a test owns: here a new one on the
// test binary's throwaway server.
func testDatabase(ctx context.Context) (string, func()) {
	url, drop, err := pgtest.Database(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return url, func() {
		if err := drop(); err != nil {
			log.Print(err)
		}
	}
}
