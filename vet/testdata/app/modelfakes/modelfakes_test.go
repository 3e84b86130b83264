package modelfakes_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/fixture"

	"example.com/bot/bottest"
)

func TestStandIns(t *testing.T) {
	up := fakeai.NewServer(t)                                       // want `model-fakes: fakeai.NewServer makes a model of the test's own: script the fixture's model`
	fixture.New(t, bottest.App(), fixture.Upstream(up.Transport())) // want `model-fakes: fixture.Upstream without fixture.ScriptedModel\(\) in the same fixture.New call`
	m := fakeai.NewModel(func(string) {})                           // want `model-fakes: fakeai.NewModel makes a model`
	srv := httptest.NewServer(m)                                    // want `model-fakes: httptest.NewServer serves a fakeai model from the test`
	defer srv.Close()
	tls := httptest.NewTLSServer(fakeai.New(t)) // want `model-fakes: fakeai.New makes` `model-fakes: httptest.NewTLSServer serves a fakeai model`
	defer tls.Close()
	// Options gathered apart from fixture.New: the vet cannot tell the
	// model is scripted.
	opts := []fixture.Option{fixture.ScriptedModel(), fixture.Upstream(http.DefaultTransport)} // want `model-fakes: fixture.Upstream without`
	fixture.New(t, bottest.App(), opts...)
}

func TestAServerAnsweringModelRoutes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // want `model-fakes: httptest.NewServer serves the model route "/v1/messages" from the test`
		if r.URL.Path == "/v1/messages" {
			fmt.Fprint(w, `{"content":[{"type":"text","text":"hi"}]}`)
		}
	}))
	defer srv.Close()
	gw := httptest.NewServer(gateway{}) // want `model-fakes: httptest.NewServer serves the model route "/v1/chat/completions"`
	defer gw.Close()
	named := httptest.NewUnstartedServer(http.HandlerFunc(anthropic)) // want `model-fakes: httptest.NewUnstartedServer serves the model route "api.anthropic.com"`
	defer named.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/v3/ai/language-model", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{}`) })
	routed := httptest.NewServer(mux) // want `model-fakes: httptest.NewServer serves the model route "/ai/language-model"`
	defer routed.Close()
	page := httptest.NewServer(http.HandlerFunc(status))
	defer page.Close()
	fixture.New(t, bottest.App(), fixture.ScriptedModel(), fixture.Upstream(page.Client().Transport))
}

type gateway struct{}

func (gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/chat/completions" {
		fmt.Fprint(w, `{"choices":[]}`)
	}
}

func anthropic(w http.ResponseWriter, r *http.Request) {
	if r.Host == "api.anthropic.com" {
		fmt.Fprint(w, `{}`)
	}
}

func status(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }
