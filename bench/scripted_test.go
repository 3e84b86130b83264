package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	slackpkg "github.com/agentvcr/agentvcr/proxy/slack"
)

// BenchmarkScriptedRun measures what a scripted Run of the fixture costs
// on the reference agent (examples/agent, in-process, behind the proxy
// with the scripted model): a web message, or a Slack mention, answered
// by the router, the title and one agent step. Its baseline is the
// agent's own time for the same input: the same message posted straight
// to the app's route, from the post until the app has written the turn's
// terminal row, the input's message_handled row and the title (the last
// of what the fixture waits for), as PostgreSQL notifies them. The two
// alternate in one run on one fixture.
//
// It reports the medians and ranges of both, in ms, and their ratio
// (target: run-ms <= 100); of the agent's own time, the part before its
// turn started (agent-turn-start-ms: its worker's wake-up, and for Slack
// the ingress); and, of the Run, how much the agent took (agent-in-run-ms,
// from the call's start to the agent's last row) and how long the call
// went on after it (tail-ms: seeing the agent idle, reading what it did,
// writing the report). web-no-report is web without
// the report: the difference is what writing it costs.
func BenchmarkScriptedRun(b *testing.B) {
	b.Run("web", func(b *testing.B) { benchScriptedRun(b, false, true) })
	b.Run("slack", func(b *testing.B) { benchScriptedRun(b, true, true) })
	b.Run("web-no-report", func(b *testing.B) { benchScriptedRun(b, false, false) })
}

func benchScriptedRun(b *testing.B, slack, reports bool) {
	dir := "" // no report
	if reports {
		dir = b.TempDir()
	}
	f := fixture.New(b, agenttest.App(nil), fixture.ScriptedModel(), fixture.Reports(dir))
	rows := listenRows(b, f.DatabaseURL())
	m := f.Model()
	script := func() {
		m.Respond(benchRouter, fakeai.Output(map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}))
		m.Respond(benchTitler, fakeai.Text("Deploy question"))
		m.Respond(benchLoop, fakeai.Text("Deploy 42 went out at 14:02."))
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil}}
	b.Cleanup(client.CloseIdleConnections)
	post := func(path string, header http.Header, body []byte) []byte {
		req, _ := http.NewRequest(http.MethodPost, f.AppURL()+path, bytes.NewReader(body))
		req.Header = header
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("POST %s: %d %v: %s", path, resp.StatusCode, err, raw)
		}
		return raw
	}
	var n int
	run := func() (total, agent time.Duration) {
		script()
		n++
		in := fixture.WebMessage(fmt.Sprintf("Did deploy %d go out? (run)", n))
		if slack {
			in = fixture.SlackMention(fmt.Sprintf("did deploy %d go out? (run)", n))
		}
		start := time.Now()
		c := f.Run(in)
		total = time.Since(start)
		if len(c.Replies) != 1 || len(c.Turns) != 1 || c.Turns[0].Status != "succeeded" {
			b.Fatalf("the Run: %+v", c)
		}
		_, last := rows.done(b, c.ID)
		return total, last.Sub(start)
	}
	// direct posts what the Run posts, as the fixture does, straight to
	// the app's route.
	direct := func() (total, wake time.Duration) {
		script()
		n++
		if !slack {
			body, _ := json.Marshal(map[string]string{"idempotencyKey": fmt.Sprintf("bench-%d", n), "message": fmt.Sprintf("Did deploy %d go out? (direct)", n)})
			start := time.Now()
			var got struct{ ConversationID string }
			json.Unmarshal(post("/api/conversations", http.Header{agenttest.Routes().UserHeader: {fixture.AuthorEmail}}, body), &got)
			started, last := rows.done(b, got.ConversationID)
			return last.Sub(start), started.Sub(start)
		}
		sm := f.Slack()
		ts := fmt.Sprintf("1890000000.%06d", n)
		text := fmt.Sprintf("<@%s> did deploy %d go out? (direct)", sm.BotUserID, n)
		sm.AddMessage(fixture.Channel, slackpkg.Message{TS: ts, User: fixture.AuthorID, Text: text})
		ev := map[string]any{"type": "app_mention", "user": fixture.AuthorID, "text": text, "channel": fixture.Channel, "ts": ts, "event_ts": ts}
		start := time.Now()
		for i, typ := range []string{"app_mention", "message"} {
			ev["type"] = typ
			if typ == "message" {
				ev["channel_type"] = "channel"
			}
			body, _ := json.Marshal(map[string]any{"token": "bench", "team_id": fixture.TeamID, "api_app_id": "AEVAL00001", "type": "event_callback",
				"event_id": fmt.Sprintf("EvBENCH%06d%d", n, i), "event_time": time.Now().Unix(), "event": ev})
			sec := strconv.FormatInt(time.Now().Unix(), 10)
			mac := hmac.New(sha256.New, []byte(agenttest.SigningSecret))
			io.WriteString(mac, "v0:"+sec+":")
			mac.Write(body)
			post("/api/webhooks/slack", http.Header{"X-Slack-Request-Timestamp": {sec}, "X-Slack-Signature": {"v0=" + hex.EncodeToString(mac.Sum(nil))}}, body)
		}
		started, last := rows.done(b, "slack:"+fixture.Channel+":"+ts)
		return last.Sub(start), started.Sub(start)
	}
	for range 3 { // warm the connections and the agent's statements
		run()
		direct()
	}
	var runs, inRun, tails, agents, wakes []float64
	for b.Loop() {
		total, agent := run()
		runs, inRun, tails = append(runs, ms(total)), append(inRun, ms(agent)), append(tails, ms(total-agent))
		total, wake := direct()
		agents, wakes = append(agents, ms(total)), append(wakes, ms(wake))
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"run", runs}, {"agent-in-run", inRun}, {"tail", tails}, {"agent", agents}, {"agent-turn-start", wakes}} {
		b.ReportMetric(median(s.v), s.name+"-ms")
		b.ReportMetric(slices.Min(s.v), s.name+"-min-ms")
		b.ReportMetric(slices.Max(s.v), s.name+"-max-ms")
	}
	b.ReportMetric(median(runs)/median(agents), "ratio")
	b.ReportMetric(0, "ns/op")
}

var (
	benchRouter = fakeai.Agent{Name: "router", Purpose: "structured", SystemPrefix: "You choose the execution profile"}
	benchTitler = fakeai.Agent{Name: "title", Match: func(p *fakeai.Prompt) bool { return strings.HasPrefix(p.LastUser(), "Generate a concise") }}
	benchLoop   = fakeai.Agent{Name: "agent", Purpose: "agent"}
)

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rowWatch hears, through LISTEN, when the agent's turn started (its
// turn_started row) and the rows a conversation is done with: its turn's
// terminal row, its input's message_handled row and its title; a trigger
// in the agent's database NOTIFYs each as it commits.
type rowWatch struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Time // conversation -> what -> when heard
	news chan struct{}                   // a token whenever seen grows
}

func listenRows(b *testing.B, url string) *rowWatch {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	_, err = conn.Exec(ctx, `
CREATE FUNCTION bench_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'junior_conversations' THEN
    IF NEW.title IS NOT NULL THEN PERFORM pg_notify('bench_rows', NEW.conversation_id || ' title'); END IF;
  ELSIF NEW.type IN ('turn_started', 'turn_completed', 'turn_failed', 'message_handled') THEN
    PERFORM pg_notify('bench_rows', NEW.conversation_id || ' ' || CASE NEW.type
      WHEN 'turn_started' THEN 'started' WHEN 'message_handled' THEN 'handled' ELSE 'terminal' END);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER bench_events AFTER INSERT ON junior_conversation_events FOR EACH ROW EXECUTE FUNCTION bench_notify();
CREATE TRIGGER bench_titles AFTER UPDATE OF title ON junior_conversations FOR EACH ROW EXECUTE FUNCTION bench_notify();
LISTEN bench_rows;`)
	if err != nil {
		b.Fatal(err)
	}
	w := &rowWatch{seen: map[string]map[string]time.Time{}, news: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			at := time.Now()
			conv, what, _ := strings.Cut(n.Payload, " ")
			w.mu.Lock()
			if w.seen[conv] == nil {
				w.seen[conv] = map[string]time.Time{}
			}
			w.seen[conv][what] = at
			w.mu.Unlock()
			select {
			case w.news <- struct{}{}:
			default:
			}
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-done
		conn.Close(context.Background())
	})
	return w
}

// done waits until the conversation's rows are heard, and returns when
// its turn started and when the last row it is done with was heard.
func (w *rowWatch) done(b *testing.B, conv string) (started, last time.Time) {
	b.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		s := w.seen[conv]
		all := len(s) == 4
		for what, at := range s {
			if what != "started" && at.After(last) {
				last = at
			}
		}
		started = s["started"]
		w.mu.Unlock()
		if all {
			return started, last
		}
		select {
		case <-w.news:
		case <-deadline:
			b.Fatalf("conversation %s: only %v heard after 30 s", conv, s)
		}
	}
}
