package sanitize

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"
)

// SanitizeValue sanitizes a JSON object that is not recorded history (a
// test's evidence: request ids, an API's state) as it sanitizes the
// payload of an event row: every string at every depth, every learned
// value and detector, and the leak check after. It returns the sanitized
// object, or an error and nothing: a *LeakError when something survived.
func (s *Sanitizer) SanitizeValue(doc []byte, name string) ([]byte, error) {
	doc = bytes.TrimSpace(doc)
	if !json.Valid(doc) || len(doc) == 0 || doc[0] != '{' {
		return nil, invalid(name, "", "not a JSON object")
	}
	// The object is the payload of a row of a document of one row, which
	// is what the rewrite and the leak check read.
	var wrapped bytes.Buffer
	wrapped.WriteString(`{"version":1,"surface":"web","events":[{"seq":1,"createdAtMs":0,"historyVersion":1,"idempotencyKey":"value","schemaVersion":1,"type":"value","payload":`)
	wrapped.Write(doc)
	wrapped.WriteString(`}]}`)
	out, err := s.Sanitize(wrapped.Bytes(), name)
	if err != nil {
		return nil, err
	}
	return []byte(gjson.GetBytes(out, "events.0.payload").Raw), nil
}
