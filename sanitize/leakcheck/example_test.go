package leakcheck_test

import (
	"fmt"

	"github.com/agentvcr/agentvcr/sanitize"
	"github.com/agentvcr/agentvcr/sanitize/leakcheck"
)

// Check is the gate for files in git: a file with a person's email
// address and no sanitizer stamp is named, with where and why, never
// the value.
func ExampleCheck() {
	doc := []byte(`{"version":1,"surface":"web","events":[{"seq":0,"type":"message","createdAtMs":1,"historyVersion":0,"schemaVersion":1,
		"payload":{"text":"write to ada.quill@corp.io"}}]}`)
	found, err := leakcheck.Check(doc, "launch.json", sanitize.DefaultRules().LeakRules())
	if err != nil {
		panic(err)
	}
	for _, f := range found {
		fmt.Printf("%s: seq %d %s: %s\n", f.File, f.Seq, f.Path, f.Problem)
	}
	// Output:
	// launch.json: seq -1 exporter.sanitizer: no sanitizer stamp: run sanitize on the raw export before committing it
	// launch.json: seq 0 message.payload.text: email address outside the reserved domains (example.com, .example, .test, .invalid)
}
