package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/fixtureservice"
	"github.com/agentvcr/agentvcr/internal/pgtest"
)

// BenchmarkFixtureService measures what the fixture service adds to a
// call: the same scripted Run of the reference agent, run as a process,
// through the Go fixture in the test's process and through the service
// (POST /v1/fixtures/{id}/run, its stream read to the result line), the
// two alternating on one machine, each on its own fixture. It reports
// the medians of both, in ms, and their difference (target: added-ms <=
// 20); go test -bench FixtureService -benchtime 20x gives the medians of
// 20 calls each.
func BenchmarkFixtureService(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "agent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/examples/agent").CombinedOutput(); err != nil {
		b.Fatalf("build the reference agent: %v\n%s", err, out)
	}
	ref := agenttest.App(nil)
	ref.Handler, ref.Command, ref.AddrEnv = nil, []string{bin}, "AGENT_ADDR"
	f := fixture.New(b, ref, fixture.ScriptedModel(), fixture.Reports(""))
	m := f.Model()

	db, err := pgtest.Server()
	if err != nil {
		b.Fatal(err)
	}
	svc := fixtureservice.New("bench-token", fixtureservice.Options{DatabaseServer: db})
	srv := httptest.NewServer(svc)
	b.Cleanup(func() { svc.Close(); srv.Close() })
	client := &http.Client{Timeout: time.Minute}
	call := func(method, path string, body any) *http.Response {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer bench-token")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode/100 != 2 {
			msg, _ := io.ReadAll(resp.Body)
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, msg)
		}
		return resp
	}
	routes := agenttest.Routes()
	app := map[string]any{"name": "examples/agent", "command": []string{bin}, "addrEnv": "AGENT_ADDR", "env": ref.Env,
		"routes": map[string]string{"preset": "junior", "idle": routes.Idle, "queue": routes.Queue, "queueHold": routes.QueueHold,
			"queueRelease": routes.QueueRelease, "conversations": routes.Conversations},
		"slackSigningSecret": ref.SlackSigningSecret, "schedulerSecret": ref.SchedulerSecret, "adminSecret": ref.AdminSecret}
	var created struct{ ID string }
	resp := call("POST", "/v1/fixtures", map[string]any{"name": b.Name(), "app": app, "scriptedModel": true})
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	b.Cleanup(func() { call("DELETE", "/v1/fixtures/"+created.ID, nil).Body.Close() })
	respond := func(agent map[string]any, r map[string]any) {
		call("POST", "/v1/fixtures/"+created.ID+"/control/v1/fakeai/respond", map[string]any{"agent": agent, "responses": []any{r}}).Body.Close()
	}
	routed := map[string]any{"reasoning_level": "low", "profile": "fast", "confidence": 0.9, "reason": "short"}

	n := 0
	direct := func() time.Duration {
		n++
		m.Respond(benchRouter, fakeai.Output(routed))
		m.Respond(benchTitler, fakeai.Text("Deploy question"))
		m.Respond(benchLoop, fakeai.Text("Deploy 42 went out at 14:02."))
		start := time.Now()
		c := f.Run(fixture.WebMessage(fmt.Sprintf("Did deploy %d go out?", n)))
		d := time.Since(start)
		if len(c.Replies) != 1 {
			b.Fatalf("the Go Run: %+v", c)
		}
		return d
	}
	served := func() time.Duration {
		n++
		respond(map[string]any{"name": "router", "purpose": "structured", "systemPrefix": "You choose the execution profile"}, map[string]any{"output": routed})
		respond(map[string]any{"name": "title", "purpose": "text"}, map[string]any{"text": "Deploy question"})
		respond(map[string]any{"name": "agent", "purpose": "agent"}, map[string]any{"text": "Deploy 42 went out at 14:02."})
		start := time.Now()
		resp := call("POST", "/v1/fixtures/"+created.ID+"/run", map[string]any{"input": map[string]any{"kind": "webMessage", "text": fmt.Sprintf("Did deploy %d go out?", n)}})
		var last []byte
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			last = append(last[:0], sc.Bytes()...)
		}
		resp.Body.Close()
		d := time.Since(start)
		var l struct {
			Result *struct{ Replies []json.RawMessage }
			Error  string
		}
		if json.Unmarshal(last, &l) != nil || l.Result == nil || len(l.Result.Replies) != 1 {
			b.Fatalf("the served run: %s", last)
		}
		return d
	}
	for range 3 { // warm both
		direct()
		served()
	}
	var gos, svcs []float64
	for b.Loop() {
		gos = append(gos, ms(direct()))
		svcs = append(svcs, ms(served()))
	}
	b.ReportMetric(median(gos), "go-ms")
	b.ReportMetric(median(svcs), "service-ms")
	b.ReportMetric(median(svcs)-median(gos), "added-ms")
	b.ReportMetric(slices.Max(svcs), "service-max-ms")
	b.ReportMetric(0, "ns/op")
}
