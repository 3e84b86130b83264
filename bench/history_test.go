package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/juniortest"
	"github.com/agentvcr/agentvcr/internal/pgtest"
	"github.com/agentvcr/agentvcr/schema"
)

// recorderBuild is the recorder binary, built once per test binary on first
// use and removed when the tests are done.
var recorderBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	if os.Getenv(serverRoleEnv) != "" {
		os.Exit(serveLoad())
	}
	code := pgtest.Main(m)
	if recorderBuild.dir != "" {
		os.RemoveAll(recorderBuild.dir)
	}
	os.Exit(code)
}

// corpus is one database holding a long conversation, and the tools to
// move it.
type corpus struct {
	url      string
	conn     *pgx.Conn
	id       string
	rows     int // copied rows, the ones both sides move
	recorder string
	psql     string
	dir      string
}

func newCorpus(tb testing.TB, events int) *corpus {
	tb.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		tb.Fatal("psql is not installed: apt-get install postgresql-client (.ci/run does)")
	}
	url, conn := juniortest.Database(tb)
	conv := juniortest.Long(events)
	juniortest.Insert(tb, conn, conv)
	c := &corpus{url: url, conn: conn, id: conv.ID, recorder: buildRecorder(tb), psql: psql, dir: tb.TempDir()}
	for _, e := range conv.Events {
		if !juniortest.Uncopied(e.Type) {
			c.rows++
		}
	}
	return c
}

func buildRecorder(tb testing.TB) string {
	tb.Helper()
	b := &recorderBuild
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "agentvcr-bench-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "recorder")
		out, err := exec.Command("go", "build", "-o", b.bin, "github.com/agentvcr/agentvcr/cmd/recorder").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.bin
}

// copiedRows is the SELECT that both export sides read: the copied rows of
// the conversation, in seq order.
func (c *corpus) copiedRows() string {
	junior, _ := schema.Lookup("junior")
	return fmt.Sprintf(`SELECT seq, type, history_version, schema_version, idempotency_key, created_at, payload, actor_identity_id
		FROM junior_conversation_events WHERE conversation_id = '%s'
		AND NOT (type = ANY('{%s}')) ORDER BY seq`, c.id, strings.Join(junior.UncopiedTypes, ","))
}

// measure runs a command to completion and returns its wall time and peak
// resident memory in bytes.
//
// The peak is read from the child's own /proc/<pid>/status (VmHWM) while it
// runs: the rusage of a child is no use here, because Linux charges a child
// that execs the high-water mark of the memory it started in, which is this
// test binary's.
func measure(tb testing.TB, name string, args ...string) (time.Duration, int64) {
	tb.Helper()
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var hwm int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			hwm = max(hwm, procStatus(cmd.Process.Pid, "VmHWM"))
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return wall, <-peak
}

// procStatus is a memory figure of /proc/PID/status, such as VmHWM (the
// peak) or VmRSS (now), in bytes; 0 when it cannot be read.
func procStatus(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// pair keeps each repeat's rows per second on both sides.
type pair struct {
	rows       int
	ours, base []float64
}

func (p *pair) add(ours, base time.Duration) {
	p.ours = append(p.ours, float64(p.rows)/ours.Seconds())
	p.base = append(p.base, float64(p.rows)/base.Seconds())
}

// report gives the median of each side's rows per second over the repeats,
// and the median and range of their ratio, each repeat's on its own: one
// repeat disturbed by the machine shows in the range, not in the median.
func (p *pair) report(b *testing.B, what string) {
	ratios := make([]float64, len(p.ours))
	for i := range ratios {
		ratios[i] = p.ours[i] / p.base[i]
	}
	b.ReportMetric(median(p.ours), what+"-rows/s")
	b.ReportMetric(median(p.base), "psql-rows/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(slices.Min(ratios), "ratio-min")
	b.ReportMetric(slices.Max(ratios), "ratio-max")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkExport times each repeat (one per b.N; run it with -benchtime
// 3x) as an export by the recorder and then psql's \copy of the same rows.
func BenchmarkExport(b *testing.B) {
	for _, events := range []int{10000, 100000} {
		// The corpus is the parent's, so that the first call of the
		// function, b.N = 1, and the one that measures share it: the
		// measured repeats read rows read before, as a production table's
		// are, not rows fresh from the insert, whose first reader (the
		// recorder, which goes first) pays for setting their hint bits.
		c := newCorpus(b, events)
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			p := pair{rows: c.rows}
			var peak int64
			b.ResetTimer()
			for range b.N {
				ours, rss := measure(b, c.recorder, "export", "--database-url", c.url, "--conversation", c.id,
					"--with-identities", "-o", os.DevNull)
				peak = max(peak, rss)
				base, _ := measure(b, c.psql, "-X", "-q", c.url, "-c", `\copy (`+c.copiedRows()+`) TO '/dev/null'`)
				p.add(ours, base)
			}
			p.report(b, "export")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
	}
}

// loadCorpus is a conversation exported for the recorder to load, the
// same rows in psql's \copy format, and a database to load them into.
type loadCorpus struct {
	*corpus
	file, copyFile string
	targetURL      string
	target         *pgx.Conn
}

func newLoadCorpus(b *testing.B, events int) *loadCorpus {
	b.Helper()
	c := &loadCorpus{corpus: newCorpus(b, events)}
	c.file = filepath.Join(c.dir, "long.json")
	measure(b, c.recorder, "export", "--database-url", c.url, "--conversation", c.id, "--with-identities", "-o", c.file)
	c.copyFile = filepath.Join(c.dir, "long.copy")
	measure(b, c.psql, "-X", "-q", c.url, "-c", `\copy (`+strings.Replace(c.copiedRows(), "SELECT seq,", "SELECT 'target' AS conversation_id, seq,", 1)+`) TO '`+c.copyFile+`'`)
	c.targetURL, c.target = juniortest.Database(b)
	return c
}

// BenchmarkLoad times each repeat (one per b.N; run it with -benchtime 3x)
// as a load by the recorder and then psql's \copy of the same rows, each
// into the emptied target database.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	cols := "seq, type, history_version, schema_version, idempotency_key, created_at, payload, actor_identity_id"
	for _, events := range []int{10000, 100000} {
		c := newLoadCorpus(b, events)
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			p := pair{rows: c.rows}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				truncate(b, c.target)
				b.StartTimer()
				ours, _ := measure(b, c.recorder, "load", "--database-url", c.targetURL, "--conversation-id", "loaded", c.file)

				b.StopTimer()
				truncate(b, c.target)
				// \copy writes the rows as they are; the identity they
				// reference and the conversation must exist first, as the
				// loader creates them.
				if _, err := c.target.Exec(ctx, `INSERT INTO junior_conversations (conversation_id) VALUES ('target')`); err != nil {
					b.Fatal(err)
				}
				for _, id := range juniortest.Long(1).Identities {
					if _, err := c.target.Exec(ctx, `INSERT INTO junior_identities (id, kind, provider, provider_subject_id)
						VALUES ($1, $2, $3, $4)`, id.ID, id.Kind, id.Provider, id.ProviderSubjectID); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				base, _ := measure(b, c.psql, "-X", "-q", c.targetURL, "-c", `\copy junior_conversation_events (conversation_id, `+cols+`) FROM '`+c.copyFile+`'`)
				p.add(ours, base)
			}
			p.report(b, "load")
		})
	}
}

func truncate(tb testing.TB, conn *pgx.Conn) {
	tb.Helper()
	if _, err := conn.Exec(context.Background(),
		`TRUNCATE junior_conversation_events, junior_conversations, junior_identities, junior_users CASCADE`); err != nil {
		tb.Fatal(err)
	}
}

// TestHarness runs both benchmarks' commands once on a small conversation,
// so a broken harness shows up in the ordinary test run.
func TestHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the recorder")
	}
	c := newCorpus(t, 500)
	file := filepath.Join(c.dir, "small.json")
	measure(t, c.recorder, "export", "--database-url", c.url, "--conversation", c.id, "--with-identities", "-o", file)
	rec, err := history.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) != c.rows {
		t.Fatalf("exported %d rows; the psql side moves %d", len(rec.Events), c.rows)
	}
	measure(t, c.psql, "-X", "-q", c.url, "-c", `\copy (`+c.copiedRows()+`) TO '/dev/null'`)
}
