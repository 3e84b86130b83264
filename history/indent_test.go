package history

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// indentCases are inputs at the edges of what json.Indent does: empty
// and nested containers, space where it is dropped and where it is kept,
// escapes, numbers, and what is not JSON.
var indentCases = []string{
	`{}`, `[]`, `{ }`, `[ ]`, "[\n]", `{"a":{}}`, `{"a":[ ]}`, `[[],[{}]]`,
	`{"a":1,"b":[1,2,{"c":null}],"d":"x"}`,
	`{"a" : 1 , "b" : [ true , false ] }`,
	"  \t\n{\"a\":1}  \n\t", "{\"a\":1}\r\n",
	`"just a string"`, `0`, `-0`, `-12.5e+3`, `1E9`, `0.5`, `true`, `null`, `[0,-0,1e-7,2E+8]`,
	`{"s":"quote \" backslash \\ slash \/ \b\f\n\r\t \u00e9 \uD83D\uDE00"}`,
	`{"é":"ünïcödé","emoji":"😀"}`, "{\"bad utf8\":\"\xff\xfe\"}", "{\"del\":\"\x7f\"}",
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[-]`, `[+1]`,
	`{"s":"\x"}`, `{"s":"\u12"}`, `{"s":"\u12G4"}`, "{\"s\":\"tab\there\"}", `{"s":"open`,
	`[truex]`, `[nul]`, `tru`, ``, ` `, `{} {}`, `{}x`, `[1 2]`, `{"a":1 "b":2}`,
}

// deepCases are at json's limit of 10,000 levels, and past it.
var deepCases = []string{
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat("[", 9999) + "[1]" + strings.Repeat("]", 9999),
	strings.Repeat("[", 10000) + "[1]" + strings.Repeat("]", 10000),
	strings.Repeat(`{"a":[`, 5000) + "1" + strings.Repeat("]}", 5000),
	strings.Repeat(`{"a":[`, 5000) + "{}" + strings.Repeat("]}", 5000),
}

func TestAppendIndentIsJSONIndent(t *testing.T) {
	for _, src := range indentCases {
		checkIndent(t, src, "      ", "  ")
	}
	// Indented 10,000 deep, a document is gigabytes: these are checked
	// with no indentation, only the line breaks.
	for _, src := range deepCases {
		checkIndent(t, src, "", "")
	}
}

// FuzzAppendIndent: whatever the input, appendIndent writes what
// json.Indent writes, and fails when it fails, with its error.
func FuzzAppendIndent(f *testing.F) {
	for _, src := range indentCases {
		if len(src) < 1000 {
			f.Add(src)
		}
	}
	f.Fuzz(func(t *testing.T, src string) { checkIndent(t, src, "      ", "  ") })
}

func checkIndent(t *testing.T, src, prefix, indent string) {
	t.Helper()
	var want bytes.Buffer
	want.WriteString("prior,")
	wantErr := json.Indent(&want, []byte(src), prefix, indent)
	got, err := appendIndent([]byte("prior,"), []byte(src), prefix, indent)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%.80q: error %v; json.Indent's %v", src, err, wantErr)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%.80q:\n got %.200q\nwant %.200q", src, got, want.Bytes())
	}
}

// BenchmarkAppendIndent re-indents a payload of a model's answer, as an
// export does for each row, against json.Indent.
func BenchmarkAppendIndent(b *testing.B) {
	payload := []byte(`{"role": "assistant", "parts": [{"text": "` + strings.Repeat("Deploy 42 went out at 14:02 UTC; the canary is green. ", 20) +
		`", "type": "text"}], "usage": {"inputTokens": 1200, "outputTokens": 85}, "modelId": "claude-haiku-4-5"}`)
	b.Run("appendIndent", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		var dst []byte
		for b.Loop() {
			dst, _ = appendIndent(dst[:0], payload, "      ", "  ")
		}
	})
	b.Run("json.Indent", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		var dst bytes.Buffer
		for b.Loop() {
			dst.Reset()
			json.Indent(&dst, payload, "      ", "  ")
		}
	})
}
