package control

import (
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// New returns the control API of p and its two mocks, sm (the Slack
// mock that p's rules in mode mock are served by) and model (the scripted
// model of its rules in mode fake), for tests in any language to drive
// them: test scopes, progress events and holds, faults, the Slack mock,
// the scripted model, counts, misses and the requests in flight. Every
// call needs "Authorization: Bearer <token>"; calls from anywhere but
// loopback are refused. Times are milliseconds; a list is [] when empty,
// never null. Errors are {"error": "..."} with a 4xx status, and those
// about a call's form name the section of docs/proxy.md that describes
// it.
//
// Its routes, with their bodies and answers, are the OpenAPI 3.1 document
// it serves at GET /v1/openapi.json (control/openapi.json), from which
// clients in other languages are typed; docs/proxy.md#control-api lists
// them.
func New(token string, p *proxy.Proxy, sm *slack.Mock, model *fakeai.Model) http.Handler {
	mux := (&api{p: p, slack: sm, fake: model}).routes().mux
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || !net.ParseIP(host).IsLoopback() {
			writeError(w, http.StatusForbidden, "the control API answers loopback only")
			return
		}
		got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		if r.ContentLength > MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a control API body is at most %d bytes; see %s", MaxBody, docControl))
			return
		}
		// A body sent without its length is cut at MaxBody: its decoding
		// then fails, and the route answers 400.
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		if err := p.Start(); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if _, pattern := mux.Handler(r); pattern == "" {
			// No route, or not this method: the error in the API's own
			// shape, not the mux's plain text.
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, r)
			if allow := rec.Header().Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
				writeError(w, rec.Code, r.Method+" "+r.URL.Path+": use "+allow+"; see "+docControl)
				return
			}
			writeError(w, rec.Code, "no route "+r.Method+" "+r.URL.Path+"; see "+docControl+" (or GET /v1/openapi.json)")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// MaxBody is the largest request body the control API reads: scripts
// and seeds are small, and a larger body is refused with 413 before it
// is read, so no client can make the proxy hold it.
const MaxBody = 8 << 20

// MaxScopeName is the longest scope name: a name is repeated in errors,
// logs and recordings' used-files.
const MaxScopeName = 256

// The sections of the manual the control API's errors point to: a client in any
// language can follow them, where a Go symbol would mean nothing.
const (
	docControl = "docs/proxy.md#control-api"
	docEvents  = "docs/proxy.md#progress-events-and-holds"
	docFaults  = "docs/proxy.md#faults"
	docFake    = "docs/proxy.md#the-scripted-model"
)

// openAPI is the control API's OpenAPI 3.1 document: its routes, bodies
// and answers, served at GET /v1/openapi.json. A test holds it to the
// routes api.routes registers and to the answers they give.
//
//go:embed openapi.json
var openAPI []byte

// api is what the control API drives: a proxy, its two mocks, and the
// holds its event subscribers keep open.
type api struct {
	p     *proxy.Proxy
	slack *slack.Mock
	fake  *fakeai.Model

	mu    sync.Mutex
	holds map[int64]chan struct{} // event id -> closed on release
}

// maxHoldTimeout bounds the hold limit a subscriber may ask for: a hold
// is for a test to look at a step, and one that waits longer than this
// was forgotten.
const maxHoldTimeout = time.Hour

// routes is the control API's mux with the patterns registered on it, in
// order, so that a test can hold them to the OpenAPI document.
type routes struct {
	mux      *http.ServeMux
	patterns []string
}

func (rt *routes) handle(pattern string, h http.HandlerFunc) {
	rt.mux.HandleFunc(pattern, h)
	rt.patterns = append(rt.patterns, pattern)
}

// routes registers the control API's routes; New adds the checks every
// call passes first.
func (a *api) routes() *routes {
	p := a.p
	rt := &routes{mux: http.NewServeMux()}
	rt.handle("GET /v1/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	rt.handle("POST /v1/scopes", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name string `json:"name"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" || len(body.Name) > MaxScopeName {
			badRequest(w, fmt.Sprintf(`the body must be {"name": "..."}, a name of 1 to %d bytes`, MaxScopeName), docControl)
			return
		}
		if err := p.BeginScope(body.Name); err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle("POST /v1/scopes/{name}/end", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Passed *bool `json:"passed"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Passed == nil {
			badRequest(w, `the body must be {"passed": true|false}`, docControl)
			return
		}
		res, err := p.EndScope(r.PathValue("name"), *body.Passed)
		switch {
		case errors.Is(err, proxy.ErrScopeNotOpen):
			writeError(w, http.StatusConflict, err.Error())
		case errors.Is(err, proxy.ErrUnknownSlackMethod), errors.Is(err, proxy.ErrUnscripted), errors.Is(err, proxy.ErrUnusedScript):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "missed": res.Missed, "recorded": res.Recorded, "dropped": res.Dropped,
				"unknownSlack": orEmpty(res.UnknownSlack), "unscripted": orEmpty(res.Unscripted), "unused": orEmpty(res.Unused)})
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, res)
		}
	})
	rt.handle("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Stats()) })
	rt.handle("GET /v1/misses", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Misses()) })
	rt.handle("GET /v1/inflight", func(w http.ResponseWriter, r *http.Request) {
		open := p.InFlight()
		writeJSON(w, map[string]any{"count": len(open), "requests": open})
	})
	rt.handle("GET /v1/slack/calls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"calls": a.slack.Calls(r.URL.Query().Get("method")), "unknown": a.slack.Unknown()})
	})
	rt.handle("GET /v1/slack/channels/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, a.slack.Messages(r.PathValue("id")))
	})
	rt.handle("POST /v1/slack/seed", func(w http.ResponseWriter, r *http.Request) {
		var seed struct {
			Users     []slack.User    `json:"users"`
			Channels  []slack.Channel `json:"channels"`
			Messages  []seedMessage   `json:"messages"`
			Subscribe []struct {
				Channel  string `json:"channel"`
				ThreadTS string `json:"thread_ts"`
			} `json:"subscribe"`
		}
		if err := json.NewDecoder(r.Body).Decode(&seed); err != nil {
			badRequest(w, "the body must be {users, channels, messages, subscribe}: "+err.Error(), docControl)
			return
		}
		for _, u := range seed.Users {
			a.slack.AddUser(u)
		}
		for _, c := range seed.Channels {
			a.slack.AddChannel(c)
		}
		added := []slack.Message{}
		for _, m := range seed.Messages {
			added = append(added, a.slack.AddMessage(m.Channel, m.Message))
		}
		for _, s := range seed.Subscribe {
			a.slack.Subscribe(s.Channel, s.ThreadTS)
		}
		writeJSON(w, map[string]any{"messages": added})
	})
	rt.handle("POST /v1/slack/errors", func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			Method       string         `json:"method"`
			Error        string         `json:"error"`
			RetryAfterMs int            `json:"retryAfterMs"`
			Extra        map[string]any `json:"extra"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil || q.Method == "" || q.Error == "" {
			badRequest(w, `the body must be {"method": "chat.postMessage", "error": "ratelimited" or a Slack error code, "retryAfterMs": milliseconds, "extra": {...}}`, docControl)
			return
		}
		if q.Error == "ratelimited" {
			a.slack.QueueRateLimit(q.Method, time.Duration(q.RetryAfterMs)*time.Millisecond)
		} else {
			a.slack.QueueError(q.Method, q.Error, q.Extra)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	a.fakeRoutes(rt)
	rt.handle("GET /v1/events", func(w http.ResponseWriter, r *http.Request) { a.streamEvents(w, r) })
	rt.handle("POST /v1/events/{id}/release", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if !a.release(id) {
			writeError(w, http.StatusNotFound, "no held event "+r.PathValue("id")+": it was released, its request ended, or it was never held (ask for holds with GET /v1/events?hold=...; see "+docEvents+")")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle("POST /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		var f proxy.Fault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
			badRequest(w, `the body must be a fault, such as {"kind": "reject_model_request"}: `+err.Error(), docFaults)
			return
		}
		id, err := p.AddFault(f)
		if err != nil {
			badRequest(w, err.Error(), docFaults)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]int64{"id": id})
	})
	rt.handle("GET /v1/faults", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Faults()) })
	rt.handle("DELETE /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		p.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	return rt
}

// orEmpty is l, or an empty list for nil: clients in other languages get
// [] where a list is meant, never null.
func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

// seedMessage is a message to seed, with its channel.
type seedMessage struct {
	Channel string `json:"channel"`
	slack.Message
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// badRequest answers 400 with msg and the manual's section that says what
// the call takes.
func badRequest(w http.ResponseWriter, msg, doc string) {
	writeError(w, http.StatusBadRequest, msg+"; see "+doc)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// fakeRoutes are the control API's calls that script the model rules in
// mode fake answer from, and read what it was asked.
func (a *api) fakeRoutes(rt *routes) {
	decode := func(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			badRequest(w, "the body must be "+shape+": "+err.Error(), docFake)
			return false
		}
		return true
	}
	rt.handle("POST /v1/fakeai/respond", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Agent     fakeai.Agent      `json:"agent"`
			Responses []fakeai.Response `json:"responses"`
		}
		if !decode(w, r, &body, `{"agent": {"name", "systemPrefix", "systemContains", "tools", "model", "purpose"}, "responses": [{"text"} | {"output"} | {"toolCalls", "then"} | {"truncated"} | {"providerError"}]}`) {
			return
		}
		if err := body.Agent.Validate(); err != nil {
			badRequest(w, err.Error(), docFake)
			return
		}
		if len(body.Responses) == 0 {
			badRequest(w, `a script needs at least one response in "responses"`, docFake)
			return
		}
		a.fake.Respond(body.Agent, body.Responses...)
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle("GET /v1/fakeai/calls", func(w http.ResponseWriter, r *http.Request) {
		calls := a.fake.AllCalls()
		if name := r.URL.Query().Get("agent"); name != "" {
			calls = a.fake.Calls(fakeai.Agent{Name: name})
		}
		writeJSON(w, map[string]any{"calls": calls, "failures": a.fake.Failures()})
	})
	rt.handle("POST /v1/fakeai/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Vectors [][]float32 `json:"vectors"`
		}
		if !decode(w, r, &body, `{"vectors": [[0.1, 0.2], ...]}`) {
			return
		}
		a.fake.RespondEmbeddings(body.Vectors...)
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle("GET /v1/fakeai/embeddings", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, a.fake.EmbedCalls()) })
	rt.handle("POST /v1/fakeai/images", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Images [][]byte `json:"images"`
		}
		if !decode(w, r, &body, `{"images": ["<base64>", ...]}`) {
			return
		}
		a.fake.RespondImages(body.Images...)
		w.WriteHeader(http.StatusNoContent)
	})
	rt.handle("GET /v1/fakeai/images", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, a.fake.ImageCalls()) })
	rt.handle("DELETE /v1/fakeai", func(w http.ResponseWriter, r *http.Request) {
		// A reset inside a scope would lose the failures the scope is
		// counting from.
		if name := a.p.OpenScope(); name != "" {
			writeError(w, http.StatusConflict, fmt.Sprintf("scope %q is open: end it before resetting the scripted model", name))
			return
		}
		a.fake.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
}
