package sanitize_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/sanitize"
)

// rssChildEnv names the input file when the test binary runs as the child
// whose memory TestPeakRSSOfA50MBInput measures.
const rssChildEnv = "AGENTVCR_PEAK_RSS_INPUT"

// bigInput writes one Slack conversation of at least size bytes: turns of
// 300 people, each with the person's message naming others and their
// emails, a directory lookup, and a shell tool's
// output, the model history nested in strings as Junior writes it.
func bigInput(size int) []byte {
	firsts := []string{"Maren", "Tobias", "Ines", "Rafael", "Hedda", "Cosmin", "Jakub", "Marta", "Oskar", "Lucía",
		"Chiara", "Kwame", "Yusuf", "Astrid", "Elif", "Quentin", "Thabo", "Mirela", "Henrik", "Beatriz"}
	lasts := []string{"Holloway", "Wren", "Carvalho", "Okafor", "Lindgren", "Varga", "Kowalski", "Keller", "Lindqvist",
		"Ferrer", "Montanari", "Asante", "Demir", "Solberg", "Popescu"}
	var people []pdPerson
	for i := range 300 {
		first, last := firsts[i%len(firsts)], lasts[(i/len(firsts))%len(lasts)]
		people = append(people, pdPerson{id: fmt.Sprintf("%08x-1111-4222-8333-%012x", i, i*7919), name: first + " " + last,
			handle: strings.ToLower(first[:1] + last), email: strings.ToLower(first+"."+last) + "@quillfeather.io",
			subject: fmt.Sprintf("U07P%06d", i), tenant: "T07QUILLF1"})
	}
	build := func(turns int) []byte {
		d := &pdDoc{surface: "slack", conversation: "slack:C07BIGDOC1:1790600000.000100", clock: 1790600000000, identities: people}
		for i := range turns {
			who, other, third := people[i%len(people)], people[(i*7+3)%len(people)], people[(i*13+5)%len(people)]
			d.turn(who,
				fmt.Sprintf("Step %d: ask %s (%s) for the Q3 numbers and cc %s. The export is in %s_q3_%d.csv.",
					i, other.name, other.email, third.name, strings.ReplaceAll(strings.ToLower(other.name), " ", "_"), i),
				fmt.Sprintf("Step %d done: %s has the numbers, %s is in copy.", i, other.name, third.name),
				pdTool{name: "hrDirectoryLookup", args: pdObj{{"email", other.email}},
					value: pdObj{{"people", []any{pdObj{{"name", other.name}, {"email", other.email}, {"handle", other.handle},
						{"title", "Finance"}}}}}},
				pdTool{name: "bash", args: pdObj{{"command", fmt.Sprintf("grep -c %s exports/q3_%d.csv", other.handle, i)}},
					text: fmt.Sprintf("%d\n# exported by %s <%s> on 2026-09-%02d\n%s", i%97, third.name, third.email, i%28+1,
						strings.Repeat("row,amount,currency,approved\n", 20))})
		}
		return d.compact()
	}
	turns := 64
	doc := build(turns)
	for len(doc) < size {
		turns = turns*size/len(doc) + 8
		doc = build(turns)
	}
	return doc
}

// TestPeakRSSOfA50MBInput sanitizes one 50 MB input in a child process,
// this test binary run again, and holds its peak resident memory under
// ten times the input's size (the design's target is four; see below).
func TestPeakRSSOfA50MBInput(t *testing.T) {
	if path := os.Getenv(rssChildEnv); path != "" {
		rssChild(t, path)
		return
	}
	const size = 50 << 20
	input := filepath.Join(t.TempDir(), "big.json")
	doc := bigInput(size)
	if err := os.WriteFile(input, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPeakRSSOfA50MBInput$", "-test.count=1", "-test.timeout=6m")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("sanitizing %d MB took longer than 6 minutes", len(doc)>>20)
	}
	if err != nil {
		t.Fatalf("the child failed: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var hwm, out int64 = -1, -1
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "peak-rss" {
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
			out, _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	if hwm < 0 {
		t.Fatalf("the child reported no peak:\n%s%s", stdout.String(), stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage for the child")
	}
	maxRSS := ru.Maxrss * 1024 // Linux reports kilobytes
	t.Logf("input %.1f MB, output %.1f MB, in %v (%.1f MB/s with start-up): peak RSS %.1f MB (rusage), VmHWM %.1f MB: %.2f times the input",
		float64(len(doc))/(1<<20), float64(out)/(1<<20), took.Round(time.Millisecond), float64(len(doc))/(1<<20)/took.Seconds(),
		float64(maxRSS)/(1<<20), float64(hwm)/(1<<20), float64(max(maxRSS, hwm))/float64(len(doc)))
	// The design's target is under 4 times the input; what holds today is
	// about 7 (the leak check reads the output while the input, the
	// output, the edits and the dictionary of a 50 MB file are all live,
	// and Go's collector lets the heap grow to twice what is live). The
	// bound keeps it from growing further.
	const bound = 10
	if peak := max(maxRSS, hwm); peak >= bound*int64(len(doc)) {
		t.Errorf("peak RSS %.1f MB is not under %d times the input's %.1f MB", float64(peak)/(1<<20), bound, float64(len(doc))/(1<<20))
	}
}

// rssChild sanitizes the input as the command does for one file (read it,
// sanitize, write the result) and prints its peak resident memory.
func rssChild(t *testing.T, path string) {
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sanitize.New(sanitize.Options{Key: []byte(plantedDirKey)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sanitize(doc, filepath.Base(path))
	if err != nil {
		t.Fatalf("refused: %s", describe(err))
	}
	if err := os.WriteFile(path+".out", out, 0o600); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			fmt.Printf("peak-rss %d %d\n", kb*1024, len(out))
			return
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
}
