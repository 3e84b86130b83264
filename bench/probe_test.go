package bench

import (
	"testing"
	"time"
	"runtime"

	"github.com/tidwall/gjson"
)

func walkAll(v gjson.Result, n *int) {
	switch {
	case v.Type == gjson.String:
		*n += len(v.Str)
		if len(v.Str) > 1 && (v.Str[0] == '{' || v.Str[0] == '[') && gjson.Valid(v.Str) {
			walkAll(gjson.Parse(v.Str), n)
		}
	case v.IsObject() || v.IsArray():
		v.ForEach(func(k, val gjson.Result) bool { *n += len(k.Str); walkAll(val, n); return true })
	}
}

func TestProbe(t *testing.T) {
	docs, total := corpusOf(t, 50<<20)
	runtime.GOMAXPROCS(1)
	start := time.Now()
	for _, d := range docs { gjson.ValidBytes(d) }
	t.Logf("valid: %.0f MB/s", float64(total)/(1<<20)/time.Since(start).Seconds())
	start = time.Now()
	n := 0
	for _, d := range docs { walkAll(gjson.ParseBytes(d), &n) }
	t.Logf("walk: %.0f MB/s", float64(total)/(1<<20)/time.Since(start).Seconds())
	start = time.Now()
	for _, d := range docs { gjson.ParseBytes(d).Get("events").ForEach(func(_, r gjson.Result) bool { r.Get("seq"); r.Get("type"); return true }) }
	t.Logf("seq/type gets: %.0f MB/s", float64(total)/(1<<20)/time.Since(start).Seconds())
}
