package clean_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/google/go-cmp/cmp"

	"example.com/bot/bottest"
)

// The model is the fixture's, scripted; the web is the test's own, which
// is not a model.
func TestClean(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "All systems operational.")
	}))
	defer site.Close()
	f := fixture.New(t, bottest.App(), fixture.ScriptedModel(), fixture.Upstream(site.Client().Transport))
	f.Model().Respond("agent", fakeai.Text("Deploy 42 went out."))
	conv := f.Run(fixture.SlackMention("did deploy 42 go out?"))
	if d := cmp.Diff(conv.Replies, []string{"Deploy 42 went out."}); d != "" {
		t.Fatal(d)
	}
	_ = judge.Rubric{Pass: []string{"answers"}}
	get(t, f.AppURL())
}
