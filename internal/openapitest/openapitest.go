// Package openapitest checks this module's OpenAPI documents in tests: a
// document is OpenAPI 3.1 by the OpenAPI Initiative's own schema, and
// every schema in it is a valid JSON Schema 2020-12 schema whose
// references resolve.
package openapitest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed openapi-3.1-schema.json
var oasSchema []byte

// Valid fails t unless doc is an OpenAPI 3.1 document whose every
// components schema compiles (with c, which holds doc at url).
func Valid(t testing.TB, doc []byte, url string, c *jsonschema.Compiler) {
	t.Helper()
	meta := jsonschema.NewCompiler()
	metaDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader(oasSchema))
	if err != nil {
		t.Fatal(err)
	}
	const metaURL = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
	if err := meta.AddResource(metaURL, metaDoc); err != nil {
		t.Fatal(err)
	}
	oas, err := meta.Compile(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("the document is not JSON: %v", err)
	}
	if err := oas.Validate(v); err != nil {
		t.Fatalf("not an OpenAPI 3.1 document: %v", err)
	}
	// The OpenAPI schema leaves the Schema Objects to JSON Schema:
	// compiling each checks it against the 2020-12 meta-schema and
	// resolves its references.
	var parsed struct {
		Components struct {
			Schemas map[string]json.RawMessage
		}
	}
	json.Unmarshal(doc, &parsed)
	if len(parsed.Components.Schemas) == 0 {
		t.Fatal("no schemas in components")
	}
	for name := range parsed.Components.Schemas {
		if _, err := c.Compile(url + "#/components/schemas/" + name); err != nil {
			t.Errorf("components.schemas.%s: %v", name, err)
		}
	}
}
