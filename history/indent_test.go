package history

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// indentBoth indents src with indentPayload and with json.Indent, and
// fails the test when they disagree on the output or the error.
func indentBoth(t *testing.T, src []byte) {
	t.Helper()
	const prefix, indent = "      ", "  "
	var want bytes.Buffer
	wantErr := json.Indent(&want, src, prefix, indent)
	got, err := indentPayload([]byte("row:"), src)
	switch {
	case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
		t.Fatalf("input %q:\nerror %v\njson.Indent error %v", src, err, wantErr)
	case err == nil && string(got) != "row:"+want.String():
		t.Fatalf("input %q:\ngot  %q\nwant %q", src, got, "row:"+want.String())
	}
}

func TestIndentAsEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `{ }`, `[]`, `[ ]`, `{"a":1}`, `{"a": 1, "b": [1, 2.5e-3, -0, true, false, null]}`,
		`{"a":{},"b":[],"c":{ },"d":[ ],"e":[{}],"f":[[]]}`,
		" \t\n{ \"a\" : [ 1 , { \"b\" : \"c\" } ] } \r\n ",
		`{"a":"\u00e9\ud83d\ude00 \" \\ \/ \b\f\n\r\t","k\u0065y":"é"}`,
		"{\"a\":\"\xff\xfe invalid UTF-8 is kept\"}",
		`{"a":1}x`, `{"a":1}{}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":}`, `{1:2}`, `[1,]`, `[,1]`, `[1 2]`,
		`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":1e+}`, `{"a":tru}`, `{"a":truex}`, `{"a":nul}`,
		`{"a":"\u12"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}", `{"a":"open}`, `{"a":[1,2}`, `{"a":{]}`, `{"a":1]`,
		`{"a":1`, `{"a":[`, `{`, `[`, ``, ` `, `"s"`, `1`, `-1.5e3`, `1 `, `true`, `null`,
		`{"deep":` + strings.Repeat("[", maxIndentDepth) + strings.Repeat("]", maxIndentDepth) + `}`,
		`{"deep":` + strings.Repeat(`{"a":[`, maxIndentDepth) + `1` + strings.Repeat("]}", maxIndentDepth) + `}`,
		`{"deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	}
	for _, d := range docs {
		indentBoth(t, []byte(d))
		if len(d) > 2000 {
			continue // each cut of a deep document costs the square of its depth
		}
		for cut := range len(d) {
			indentBoth(t, []byte(d[:cut]))
		}
	}
}

// TestIndentEdges: more of json.Indent's edges, written apart from the
// indenter: space where it is dropped and where it is kept, empty
// containers with space inside, numbers and escapes json takes and refuses.
func TestIndentEdges(t *testing.T) {
	for _, d := range []string{
		"[\n]", `{"a":[ ]}`, `[[],[{}]]`, "{\"a\":1}\r\n", "  \t\n{\"a\":1}  \n\t", `[0,-0,1e-7,2E+8]`, `0`, `-0`, `0.5`, `1E9`,
		"{\"del\":\"\x7f\"}", `{"s":"\u12G4"}`, "{\"s\":\"tab\there\"}", `[01]`, `[1.]`, `[.5]`, `[-]`, `[+1]`,
		`[truex]`, `[nul]`, `tru`, `{} {}`, `{}x`, `{"a":1 "b":2}`, `{a:1}`, `{"a"}`,
	} {
		indentBoth(t, []byte(d))
	}
}

func FuzzIndent(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "c"}], "d": {}, "e": []}`))
	f.Add([]byte(` {"a":"\u00e9","b":-1.5e3,"c":[true,false,null]} `))
	f.Fuzz(func(t *testing.T, src []byte) {
		indentBoth(t, src)
	})
}
