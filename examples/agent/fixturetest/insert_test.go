package fixturetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/proxy"
)

// extractor is the memory plugin's extraction call.
var extractor = fakeai.Agent{Name: "memory", Purpose: "structured", SystemPrefix: "You extract memories"}

// getAs GETs an app route as the web user email (or with the admin
// bearer when email is ""), and returns the status and the body.
func getAs(t *testing.T, f *fixture.Fixture, path, email string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.AppURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if email != "" {
		req.Header.Set(agenttest.Routes().UserHeader, email)
	} else {
		req.Header.Set("Authorization", "Bearer "+agenttest.AdminSecret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// A scheduled automation's run answers in its destination: a channel
// (the fixture's by default), a user's DM, or a web conversation of the
// user, theirs to read and continue and no one else's.
func TestScheduledAutomationDestinations(t *testing.T) {
	const other = "U0OTHERUSR"
	tests := []struct {
		name    string
		dest    fixture.Destination
		channel string // where the run posts; "" for nowhere in Slack
	}{
		{"the fixture's channel", fixture.Destination{}, fixture.Channel},
		{"another channel", fixture.ChannelDestination("CEVAL00002"), "CEVAL00002"},
		{"the author's DM", fixture.DMDestination(fixture.AuthorID), fixture.DMChannel},
		{"another user's DM", fixture.DMDestination(other), "D0OTHERUSR"},
		{"a web conversation", fixture.WebDestination(fixture.AuthorEmail), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
			m := f.Model()
			m.Respond(router, routed())
			m.Respond(loop, fakeai.Text("Digest: 3 deploys, 0 incidents."))
			f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "digest", Task: "Post the deploy digest.", Destination: tt.dest})
			conv := f.Run(fixture.Heartbeat())
			if !slices.Equal(conv.ReplyTexts(), []string{"Digest: 3 deploys, 0 incidents."}) || len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" {
				t.Fatalf("call %+v", conv)
			}
			if p := m.Calls(loop)[0].Prompt.Text(); !strings.Contains(p, "Post the deploy digest.") {
				t.Fatalf("the prompt: %s", p)
			}
			posts := f.Slack().Calls("chat.postMessage")
			if tt.channel == "" {
				if len(posts) != 0 {
					t.Fatalf("a web run posted to Slack: %+v", posts)
				}
			} else if len(posts) != 1 || posts[0].Params["channel"] != tt.channel || posts[0].Params["thread_ts"] != "" {
				t.Fatalf("posts %+v; want one, top level, in %s", posts, tt.channel)
			}
			if tt.channel != "" {
				return
			}
			// The web run is the user's conversation: they read it, and
			// it takes their messages; someone else may not read it.
			if !strings.HasPrefix(conv.ID, "local:web:") {
				t.Fatalf("the web run is conversation %s", conv.ID)
			}
			report := strings.ReplaceAll(agenttest.Routes().Report, "{id}", conv.ID)
			if status, body := getAs(t, f, report, fixture.AuthorEmail); status != http.StatusOK || !strings.Contains(body, "Digest: 3 deploys, 0 incidents.") {
				t.Fatalf("the user reads the run: %d %s", status, body)
			}
			if status, _ := getAs(t, f, report, "someone@example.com"); status != http.StatusForbidden {
				t.Fatalf("another user reads the run: %d; want 403", status)
			}
			m.Respond(router, routed())
			m.Respond(loop, fakeai.Text("Yesterday had 2."))
			next := conv.Continue(fixture.WebMessage("and yesterday?"))
			if next.ID != conv.ID || !slices.Equal(next.ReplyTexts(), []string{"Yesterday had 2."}) {
				t.Fatalf("the user continues the run: %+v", next)
			}
		})
	}
}

// An inserted memory reaches the prompt of its user's turns, on the web
// and in Slack, and a workspace memory reaches every turn; another
// user's memory reaches none.
func TestInsertedMemoriesReachThePrompt(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	m := f.Model()
	f.InsertMemory(fixture.Memory{User: fixture.AuthorEmail, Text: "Prefers answers in metric units."})
	f.InsertMemory(fixture.Memory{Text: "The team deploys on Tuesdays."})
	f.InsertMemory(fixture.Memory{User: "someone@example.com", Text: "Is allergic to peanuts."})
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Trail length"), fakeai.Text("Deploy day"))
	m.Respond(loop, fakeai.Text("About 12 km."), fakeai.Text("On Tuesday."))
	f.Run(fixture.WebMessage("How long is the ridge trail?"))
	f.Run(fixture.SlackMention("when do we deploy?"))
	calls := m.Calls(loop)
	for i, c := range calls {
		p := c.Prompt.Text()
		if !strings.Contains(p, "Prefers answers in metric units.") || !strings.Contains(p, "The team deploys on Tuesdays.") {
			t.Errorf("turn %d's prompt lacks the user's or the workspace's memory: %s", i, p)
		}
		if strings.Contains(p, "peanuts") {
			t.Errorf("turn %d's prompt has another user's memory: %s", i, p)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("%d agent calls", len(calls))
	}
}

// A turn that needs GitHub goes on without an authorization when the
// user's credential was inserted: on the web and in Slack, each as the
// app knows the user there, and with the inserted token.
func TestAnInsertedCredentialNeedsNoAuthorization(t *testing.T) {
	const token = "fixture-github-token-inserted"
	github := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		switch {
		case r.URL.Host != "api.github.com" || r.URL.Path != "/search/issues":
			http.NotFound(rec, r)
		case r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(rec, "bad credentials", http.StatusUnauthorized)
		default:
			fmt.Fprint(rec, `{"total_count":1,"items":[{"number":7,"title":"Billing migration rollback plan"}]}`)
		}
		return rec.Result(), nil
	})
	for _, in := range []fixture.Input{fixture.WebMessage("Which issue has the billing rollback plan?"), fixture.SlackMention("which issue has the billing rollback plan?")} {
		f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel(), fixture.Recordings(t.TempDir(), proxy.ModeRecord),
			fixture.Upstream(github), fixture.Allow("https://api.github.com"))
		m := f.Model()
		m.Respond(router, routed())
		m.Respond(titler, fakeai.Text("Billing issues"))
		m.Respond(loop, fakeai.ToolCalls(fakeai.Call("githubIssues", map[string]string{"query": "billing"})).
			Then(fakeai.Text("Issue 7 has the rollback plan.")))
		f.InsertCredential(fixture.Credential{Provider: "github", Token: token})
		conv := f.Run(in)
		if len(conv.Turns) != 1 || conv.Turns[0].Status != "succeeded" || !slices.Equal(conv.ReplyTexts(), []string{"Issue 7 has the rollback plan."}) {
			t.Fatalf("%s: call %+v", conv.ID, conv)
		}
		if len(conv.ToolCalls) != 1 || conv.ToolCalls[0].Status != "completed" || !strings.Contains(conv.ToolCalls[0].Output, "Billing migration rollback plan") {
			t.Fatalf("%s: tool calls %+v", conv.ID, conv.ToolCalls)
		}
		if n := len(f.Slack().Calls("chat.postEphemeral")); n != 0 {
			t.Fatalf("%s: %d private authorization links sent", conv.ID, n)
		}
		var asked int
		connect(t, f.DatabaseURL()).QueryRow(context.Background(), `SELECT count(*) FROM junior_conversation_events
			WHERE conversation_id = $1 AND type = 'authorization_requested'`, conv.ID).Scan(&asked)
		if asked != 0 {
			t.Fatalf("%s: %d authorizations requested", conv.ID, asked)
		}
	}
}

// The insert functions write data and nothing else: no model request,
// no conversation, no Slack call, and the app stays idle.
func TestInsertFunctionsRunNoTurn(t *testing.T) {
	f := fixture.New(t, exampleAgent(nil), fixture.ScriptedModel())
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "channel", Task: "Post the digest."})
	f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "dm", Task: "DM the digest.", Destination: fixture.DMDestination(fixture.AuthorID)})
	f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "web", Task: "Write the digest.", Destination: fixture.WebDestination(fixture.AuthorEmail),
		Every: time.Hour, NextRun: time.Now().Add(time.Hour)})
	f.InsertMemory(fixture.Memory{User: fixture.AuthorEmail, Text: "Prefers metric units."})
	f.InsertMemory(fixture.Memory{Text: "The team deploys on Tuesdays."})
	f.InsertCredential(fixture.Credential{Provider: "github", Token: "fixture-github-token"})
	f.InsertCredential(fixture.Credential{User: "someone@example.com", Provider: "github", Token: "fixture-github-token-2"})
	if reqs := f.ModelRequests(); len(reqs) != 0 {
		t.Fatalf("model requests %+v", reqs)
	}
	status, body := getAs(t, f, agenttest.Routes().Conversations+"?since="+since, "")
	var list struct{ Conversations []json.RawMessage }
	if status != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil || len(list.Conversations) != 0 {
		t.Fatalf("conversations: %d %s", status, body)
	}
	if status, body := getAs(t, f, agenttest.Routes().Idle, ""); status != http.StatusOK || !strings.Contains(body, `"idle":true`) {
		t.Fatalf("idle: %d %s", status, body)
	}
	for _, method := range []string{"chat.postMessage", "chat.postEphemeral", "reactions.add"} {
		if n := len(f.Slack().Calls(method)); n != 0 {
			t.Fatalf("%d %s calls", n, method)
		}
	}
	var automations, memories, credentials int
	db := connect(t, f.DatabaseURL())
	db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM agent_automations), (SELECT count(*) FROM agent_memories),
		(SELECT count(*) FROM agent_credentials)`).Scan(&automations, &memories, &credentials)
	// The default author's credential is theirs on the web and in Slack.
	if automations != 3 || memories != 2 || credentials != 3 {
		t.Fatalf("%d automations, %d memories, %d credentials stored", automations, memories, credentials)
	}
}

// An insert the app's route refuses fails the test, saying what the
// route said.
func TestARefusedInsertFailsTheTest(t *testing.T) {
	tests := []struct {
		name   string
		insert func(f *fixture.Fixture)
		want   string
	}{
		{"an automation id taken", func(f *fixture.Fixture) {
			f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "digest", Task: "Post the digest."})
			f.InsertScheduledAutomation(fixture.ScheduledAutomation{ID: "digest", Task: "Post it again."})
		}, "409"},
		{"a blank memory", func(f *fixture.Fixture) { f.InsertMemory(fixture.Memory{Text: " "}) }, "400"},
		{"a provider the agent lacks", func(f *fixture.Fixture) {
			f.InsertCredential(fixture.Credential{Provider: "gitlab", Token: "fixture-token"})
		}, "no provider gitlab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &fatalTB{TB: t}
			f := fixture.New(rec, exampleAgent(nil), fixture.ScriptedModel())
			msg := rec.fatal(t, 30*time.Second, tt.name, func() { tt.insert(f) })
			if !strings.Contains(msg, tt.want) {
				t.Fatalf("the failure %q does not say %s", msg, tt.want)
			}
		})
	}
}

// With AGENT_MEMORY_EXTRACTION on, a completed turn's memories are
// extracted as background work the app counts: Run and Continue return
// only after it, with the memories stored, and the next turn recalls
// them.
func TestRunWaitsForTheMemoryExtraction(t *testing.T) {
	f := fixture.New(t, exampleAgent(map[string]string{"AGENT_MEMORY_EXTRACTION": "on"}), fixture.ScriptedModel())
	m := f.Model()
	m.Respond(router, routed(), routed())
	m.Respond(titler, fakeai.Text("Billing migration owner"))
	m.Respond(loop, fakeai.Text("Noted: you own the billing migration."), fakeai.Text("You do; Sam reviews it."))
	m.Respond(extractor, fakeai.Output(map[string]any{"memories": []map[string]string{{"text": "Owns the billing migration.", "about": "user"}}}),
		fakeai.Output(map[string]any{"memories": []map[string]string{{"text": "Sam reviews billing changes.", "about": "workspace"}}}))
	db := connect(t, f.DatabaseURL())
	stored := func(content string) (user, captured string) {
		t.Helper()
		// Read once, no wait: the call has returned.
		if err := db.QueryRow(context.Background(), `SELECT subject_key FROM agent_memories WHERE source = 'extraction' AND content = $1`,
			content).Scan(&user); err != nil {
			t.Fatalf("the extracted memory %q is not stored when the call returns: %v", content, err)
		}
		db.QueryRow(context.Background(), `SELECT payload->'content'->'memories'->0->>'content' FROM junior_conversation_events
			WHERE type = 'structured_event' AND payload->>'name' = 'memories_captured' ORDER BY seq DESC LIMIT 1`).Scan(&captured)
		return user, captured
	}

	conv := f.Run(fixture.WebMessage("I own the billing migration now."))
	if !slices.Equal(conv.ReplyTexts(), []string{"Noted: you own the billing migration."}) {
		t.Fatalf("call %+v", conv)
	}
	if user, captured := stored("Owns the billing migration."); user != fixture.AuthorEmail || captured != "Owns the billing migration." {
		t.Fatalf("the memory is %q's; the memories_captured row holds %q", user, captured)
	}
	if asked := m.Calls(extractor)[0].Prompt.Text(); !strings.Contains(asked, "I own the billing migration now.") ||
		!strings.Contains(asked, "Noted: you own the billing migration.") {
		t.Fatalf("the extraction was asked: %s", asked)
	}
	var purposes []string
	for _, r := range conv.ModelRequests {
		purposes = append(purposes, r.Purpose)
	}
	if agent := slices.Index(purposes, "agent"); agent < 0 || !slices.Contains(purposes[agent:], "structured") {
		t.Fatalf("the call's model requests %v lack the extraction after the agent's", purposes)
	}

	// The next call holds its extraction's model request: the app counts
	// the extraction as its background work (nothing else runs: the
	// conversation has its title), and Continue has not returned.
	var sawAgent, returned atomic.Bool
	held := make(chan string, 1) // the idle route while the extraction was held
	hold := fixture.OnProgress(func(ctx context.Context, p fixture.Progress, a fixture.Actions) error {
		switch {
		case p.Type != "model_request":
		case p.Purpose == "agent":
			sawAgent.Store(true)
		case p.Purpose == "structured" && sawAgent.Load():
			if returned.Load() {
				return fmt.Errorf("the call returned before the extraction's model request")
			}
			var st struct {
				Idle       bool
				Background int
			}
			status, body := idleRoute(f)
			if status != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.Idle || st.Background != 1 {
				return fmt.Errorf("while the extraction is held the idle route says %d %s; want it busy with one background task", status, body)
			}
			held <- body
		}
		return nil
	})
	next := conv.Continue(fixture.WebMessage("who owns the billing migration?"), hold)
	returned.Store(true)
	select {
	case <-held:
	default:
		t.Fatal("the call returned without its extraction's model request having been held")
	}
	if p := m.Calls(loop)[1].Prompt.Text(); !strings.Contains(p, "Owns the billing migration.") || !slices.Equal(next.ReplyTexts(), []string{"You do; Sam reviews it."}) {
		t.Fatalf("the next turn's prompt lacks the memory, or its reply is wrong (%q): %s", next.ReplyTexts(), p)
	}
	if user, captured := stored("Sam reviews billing changes."); user != "" || captured != "Sam reviews billing changes." {
		t.Fatalf("the workspace memory is %q's; the memories_captured row holds %q", user, captured)
	}
}

// idleRoute reads the app's idle route with the admin bearer, from any
// goroutine.
func idleRoute(f *fixture.Fixture) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, f.AppURL()+agenttest.Routes().Idle, nil)
	req.Header.Set("Authorization", "Bearer "+agenttest.AdminSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
