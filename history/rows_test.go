package history

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readBoth reads data with the row scanner and with the Decoder alone,
// and fails the test when they disagree on any event or error.
func readBoth(t *testing.T, data []byte, oneByte bool) {
	t.Helper()
	read := func(decodeRows bool) ([]Event, string) {
		var src io.Reader = bytes.NewReader(data)
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src, "f.json")
		r.decodeRows = decodeRows
		var events []Event
		for {
			ev, err := r.Next()
			if err == io.EOF {
				return events, ""
			}
			if err != nil {
				return events, fmt.Sprintf("%T %v", err, err)
			}
			events = append(events, ev)
		}
	}
	fastEvents, fastErr := read(false)
	slowEvents, slowErr := read(true)
	if fastErr != slowErr {
		t.Fatalf("input %q:\nscanner error %s\ndecoder error %s", data, fastErr, slowErr)
	}
	if !reflect.DeepEqual(fastEvents, slowEvents) {
		t.Fatalf("input %q:\nscanner events %+v\ndecoder events %+v", data, fastEvents, slowEvents)
	}
}

func TestRowScannerReadsAsTheDecoder(t *testing.T) {
	row1 := withRow("seq", "1")
	docs := []string{
		doc(),
		doc(row0),
		doc(row0, row1),
		doc(row0, row0),
		`{"version":1,"surface":"web","events" : [ ` + row0 + ` , ` + row1 + ` ] , "after": {"x":[1,2]} }  `,
		`{"version":1,"surface":"web","events":[` + row0 + `],"identities":[]}`,
		`{"version":1,"surface":"web","events":[` + row0 + `],"version":2}`,
		`{"version":1,"surface":"web","events":[` + row0 + `],"events":[]}`,
		`{"version":1,"surface":"web","events":[` + row0 + `]}{}`,
		`{"version":1,"surface":"web","events":[` + row0 + `,]}`,
		`{"version":1,"surface":"web","events":[,` + row0 + `]}`,
		`{"version":1,"surface":"web","events":[` + row0 + ` ` + row1 + `]}`,
		`{"version":1,"surface":"web","events":{}}`,
		`{"version":1,"surface":"web","events" 1}`,
		`{"version":1,"surface":"web","events":[5, "x", null, [], {}]}`,
		doc(`{"SEQ":0,"type":"m","payload":{}}`),
		doc(`{"seq":0,"Type":"m","payload":{},"type":"n"}`),
		doc(`{"\u0073eq":0,"type":"m","payload":{}}`),
		doc(`{"ſeq":0,"type":"m","payload":{}}`),
		doc(`{"seq":0,"type":"m","payload":{},"seq":1}`),
		doc(`{"seq":0,"type":"m","payload":{"a":"\u00e9\ud83d\ude00 \x","b":1}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":"` + "\x01" + `"}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":01}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":1.}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":-}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":tru}}`),
		doc(`{"seq":0,"type":"m","payload":{"a":"\u12"}}`),
		doc(`{"seq":null,"type":null,"payload":null,"idempotencyKey":null}`),
		doc(`{"seq":0,"type":"m","payload":{"deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`),
		doc(`{"seq":0,"type":"m","payload":{"deep":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}}`),
		doc(`{"seq":0,"type":"m","payload":{"deep":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}`),
		doc(`{"seq":0,"type":"m","payload":{"deep":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}}`),
		doc(`{"seq":0,"type":"m","payload":{"big":"`+strings.Repeat("x", 200<<10)+`"}}`, row1),
	}
	for _, d := range docs {
		readBoth(t, []byte(d), false)
		if len(d) > 2000 {
			continue
		}
		readBoth(t, []byte(d), true)
		for cut := range len(d) {
			readBoth(t, []byte(d[:cut]), false)
		}
	}
}

func FuzzRowScanner(f *testing.F) {
	f.Add([]byte(doc(row0)))
	f.Add([]byte(doc(row0, withRow("seq", "1"))))
	f.Add([]byte(`{"version":1,"surface":"web","events":[` + row0 + `],"x":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		readBoth(t, data, false)
	})
}
