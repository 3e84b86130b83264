package evals

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestALineThatIsNotACaseIsNamed(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"not JSON", `{"id":"a","input":"x"}` + "\n" + `{"id":"b",`, "cases.jsonl:2: not JSON"},
		{"a misspelt key", `{"id":"a","input":"x","expect":"y"}`, `cases.jsonl:1: unknown field "expect"; a case has id, input, expected, seed and tags`},
		{"no id", "\n\n" + `{"input":"x"}`, `cases.jsonl:3: no "id"`},
		{"no input", `{"id":"a"}`, `cases.jsonl:1: no "input"`},
		{"an id that is a path", `{"id":"../a","input":"x"}`, `cases.jsonl:1: id "../a": want letters, digits`},
		{"a null input", `{"id":"a","input":null}`, `cases.jsonl:1: no "input"`},
		{"an id twice", `{"id":"a","input":"x"}` + "\n" + `{"id":"b","input":"x"}` + "\n" + `{"id":"a","input":"y"}`, `cases.jsonl:3: id "a" is that of line 1 too`},
		{"two values on a line", `{"id":"a","input":"x"} {"id":"b","input":"y"}`, "cases.jsonl:1: more after the case"},
		{"a bracket too many", `{"id":"a","input":"x"}}`, `cases.jsonl:1: more after the case: "}"`},
		{"a seed that is not a number", `{"id":"a","input":"x","seed":"7"}`, "cases.jsonl:1: not a case: cannot unmarshal string"},
		{"not an object", `["a","x"]`, "cases.jsonl:1: not a case"},
		{"nothing", "\n  \n", "cases: cases.jsonl holds no case"},
		{"a key in other letters", `{"id":"a","input":"x","Expected":"y"}`, `cases.jsonl:1: unknown field "Expected"`},
		{"an id twice on a line", `{"id":"a","input":"x","id":"b"}`, `cases.jsonl:1: field "id" twice`},
		{"an empty input", `{"id":"a","input":""}`, `cases.jsonl:1: "input" is empty`},
		{"a line too long", `{"id":"a","input":"x"}` + "\n" + `{"id":"b","input":"` + strings.Repeat("x", 17<<20) + `"}`, "cases.jsonl:2: the line is over 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readCases("cases.jsonl", strings.NewReader(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v; want %q", err, tt.want)
			}
			if ce, ok := errors.AsType[*CaseError](err); tt.name != "nothing" && (!ok || ce.File != "cases.jsonl" || ce.Line == 0) {
				t.Fatalf("not a *CaseError: %T", err)
			}
		})
	}
}

func TestCasesKeepWhatTheGraderReads(t *testing.T) {
	cs, err := readCases("c.jsonl", strings.NewReader("\ufeff"+`{"id":"a","input":"What is 2 + 2?","expected":"4","seed":7,"tags":["web"]}`+"\n"+
		`{"id":"b","input":{"question":"q","lang":"de"},"expected":{"answer":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := cs[0], cs[1]
	if a.Text() != "What is 2 + 2?" || a.ExpectedText() != "4" || a.Seed != 7 || !a.HasTag("web") || a.File != "c.jsonl" || a.Line != 1 {
		t.Fatalf("a: %+v", a)
	}
	if b.Text() != "" || string(b.Input) != `{"question":"q","lang":"de"}` || string(b.Expected) != `{"answer":1}` || b.Line != 2 {
		t.Fatalf("b: %+v", b)
	}
}

// A subset is the same cases however the file is ordered, and adding a
// case changes it by that case at most.
func TestASubsetIsStable(t *testing.T) {
	// The file's order is not the ids' order, so that a subset sorted
	// by id would not pass for one in the file's order.
	var cs []Case
	for i := range 50 {
		cs = append(cs, Case{ID: fmt.Sprintf("case-%02d", i*37%50)})
	}
	ids := func(cs []Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		slices.Sort(out)
		return out
	}
	first := ids(subset(cs, 10))
	reversed := slices.Clone(cs)
	slices.Reverse(reversed)
	if got := ids(subset(reversed, 10)); !slices.Equal(got, first) {
		t.Fatalf("reordered: %v; want %v", got, first)
	}
	more := ids(subset(append(slices.Clone(cs), Case{ID: "new"}), 10))
	changed := 0
	for _, id := range more {
		if !slices.Contains(first, id) {
			changed++
		}
	}
	if changed > 1 || len(more) != 10 {
		t.Fatalf("adding a case changed %d of the subset: %v", changed, more)
	}
	if len(subset(cs, 0)) != 50 || len(subset(cs, 60)) != 50 {
		t.Fatal("0 or more than there are is all of them")
	}
	// In the file's order.
	got := subset(cs, 10)
	at := func(c Case) int { return slices.IndexFunc(cs, func(d Case) bool { return d.ID == c.ID }) }
	if !slices.IsSortedFunc(got, func(a, b Case) int { return at(a) - at(b) }) {
		var order []string
		for _, c := range got {
			order = append(order, c.ID)
		}
		t.Fatalf("not in the file's order: %v", order)
	}
}

// The interval's half-width, against values worked by hand: the
// standard deviation of 1, 2, 3 is 1, the standard error 1/√3, and t at
// 2 degrees of freedom 4.303.
func TestHalfWidth(t *testing.T) {
	h, ok := halfWidth([]float64{1, 2, 3})
	if !ok || math.Abs(h-4.303/math.Sqrt(3)) > 1e-9 {
		t.Fatalf("half-width %v", h)
	}
	if h, ok := halfWidth([]float64{0.7, 0.7, 0.7, 0.7}); !ok || h != 0 {
		t.Fatalf("equal values: %v", h)
	}
	if _, ok := halfWidth([]float64{0.5}); ok {
		t.Fatal("one value has no interval")
	}
	// Beyond the table, the normal's 1.96.
	xs := make([]float64, 41)
	for i := range xs {
		xs[i] = float64(i % 2)
	}
	h, _ = halfWidth(xs)
	m := 20.0 / 41 // 20 ones, 21 zeros
	ss := 20*(1-m)*(1-m) + 21*m*m
	want := 1.96 * math.Sqrt(ss/40) / math.Sqrt(41)
	if math.Abs(h-want) > 1e-12 {
		t.Fatalf("41 values: %v; want %v", h, want)
	}
}

func TestGradesAreCheckedAgainstTheirMetrics(t *testing.T) {
	metrics := []Metric{{ID: "ok", Kind: Binary}, {ID: "n", Kind: Count}, {ID: "s", Kind: Score}}
	tests := []struct {
		scores map[string]float64
		want   string
	}{
		{map[string]float64{"ok": 1, "n": 3, "s": 0.25}, ""},
		{map[string]float64{"ok": 0.5, "n": 3, "s": 0}, `metric "ok" is binary`},
		{map[string]float64{"ok": 1, "n": 1.5, "s": 0}, `metric "n" is a count`},
		{map[string]float64{"ok": 1, "n": -1, "s": 0}, `metric "n" is a count`},
		{map[string]float64{"ok": 1, "n": 0, "s": math.NaN()}, `metric "s" is NaN`},
		{map[string]float64{"ok": 1, "n": 0}, `no value for metric "s"`},
		{map[string]float64{"ok": 1, "n": 0, "s": 0, "extra": 1}, `metric "extra" is not declared`},
	}
	for _, tt := range tests {
		err := checkScores(metrics, tt.scores)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: %v; want %q", tt.scores, err, tt.want)
		}
	}
}

// A cases file that is not there, at a path relative to the working
// directory, says where it was looked for and what to do: the program
// was likely run from another directory than its module's root.
func TestAMissingCasesFileSaysToRunFromTheModuleRoot(t *testing.T) {
	const hint = "run the program from its module's root"
	tests := []struct {
		name string
		path string
		hint bool
	}{
		{"relative", "evals/nope.jsonl", true},
		{"absolute", filepath.Join(t.TempDir(), "nope.jsonl"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromJSONL(tt.path)()
			if !errors.Is(err, fs.ErrNotExist) || strings.Contains(fmt.Sprint(err), hint) != tt.hint {
				t.Fatalf("%v; want a missing file, saying %q: %v", err, hint, tt.hint)
			}
		})
	}
}
