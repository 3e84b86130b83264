package proxy

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

// Control returns the control API of the proxy, for tests in any language
// to drive it. Every call needs "Authorization: Bearer <token>"; calls from
// anywhere but loopback are refused. Times are milliseconds. Errors are
// {"error": "..."} with a 4xx status.
//
//	POST   /v1/scopes                   {"name": "..."}            open a test scope: 204; 409 when one is open
//	POST   /v1/scopes/{name}/end        {"passed": bool}           end it: {"missed": N, "recorded": N}, "dropped": N when it failed;
//	                                                               422 when the agent called a Slack method the mock lacks,
//	                                                               the scripted model got a prompt no script answers,
//	                                                               or scripted answers were left unasked for (dropped)
//	GET    /v1/stats                                               counts (Stats)
//	GET    /v1/misses                                              replay misses, with their nearest recordings
//	GET    /v1/events?hold=TYPE,...                                progress events as SSE; holds model_request,
//	                                                               tool_request, reply
//	POST   /v1/events/{id}/release                                 release a held event: 204; 404 when none is held
//	POST   /v1/faults                   Fault                      queue a fault: 201 {"id": N}
//	GET    /v1/faults                                              the queued faults
//	DELETE /v1/faults                                              clear them: 204
//	POST   /v1/slack/seed               {users, channels,          seed the Slack mock: {"messages": [...]}
//	                                     messages, subscribe}
//	POST   /v1/slack/errors             {"method", "error",        queue a Slack error for a method's next call
//	                                     "retryAfterMs", "extra"}  ("ratelimited": 429 with Retry-After): 204
//	GET    /v1/slack/calls?method=M                                the calls the mock answered, and unknown methods
//	GET    /v1/slack/channels/{id}/messages                        a channel's messages
//	POST   /v1/fakeai/respond           {"agent", "responses"}     script the model (rules in mode fake): 204
//	GET    /v1/fakeai/calls?agent=NAME                             {"calls": [...], "failures": [...]}
//	POST   /v1/fakeai/embeddings        {"vectors": [[...]]}       queue embedding vectors: 204
//	GET    /v1/fakeai/embeddings                                   the embeddings requests
//	POST   /v1/fakeai/images            {"images": [base64]}       queue images: 204
//	GET    /v1/fakeai/images                                       the image requests
//	DELETE /v1/fakeai                                              forget every script, call and failure: 204;
//	                                                               409 while a scope is open
func (p *Proxy) Control(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/scopes", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name string `json:"name"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" {
			writeError(w, http.StatusBadRequest, `the body must be {"name": "..."}`)
			return
		}
		if err := p.BeginScope(body.Name); err != nil {
			writeError(w, http.StatusConflict, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/scopes/{name}/end", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Passed *bool `json:"passed"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Passed == nil {
			writeError(w, http.StatusBadRequest, `the body must be {"passed": true|false}`)
			return
		}
		res, err := p.EndScope(r.PathValue("name"), *body.Passed)
		switch {
		case errors.Is(err, ErrScopeNotOpen):
			writeError(w, http.StatusConflict, err.Error())
		case errors.Is(err, ErrUnknownSlackMethod), errors.Is(err, ErrUnscripted), errors.Is(err, ErrUnusedScript):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "missed": res.Missed, "recorded": res.Recorded, "dropped": res.Dropped,
				"unknownSlack": res.UnknownSlack, "unscripted": res.Unscripted, "unused": res.Unused})
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, res)
		}
	})
	mux.HandleFunc("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Stats()) })
	mux.HandleFunc("GET /v1/slack/calls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"calls": p.c.slack.Calls(r.URL.Query().Get("method")), "unknown": p.c.slack.Unknown()})
	})
	mux.HandleFunc("GET /v1/slack/channels/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, p.c.slack.Messages(r.PathValue("id")))
	})
	mux.HandleFunc("POST /v1/slack/seed", func(w http.ResponseWriter, r *http.Request) {
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
			writeError(w, http.StatusBadRequest, "the body must be {users, channels, messages, subscribe}: "+err.Error())
			return
		}
		for _, u := range seed.Users {
			p.c.slack.AddUser(u)
		}
		for _, c := range seed.Channels {
			p.c.slack.AddChannel(c)
		}
		var added []slack.Message
		for _, m := range seed.Messages {
			added = append(added, p.c.slack.AddMessage(m.Channel, m.Message))
		}
		for _, s := range seed.Subscribe {
			p.c.slack.Subscribe(s.Channel, s.ThreadTS)
		}
		writeJSON(w, map[string]any{"messages": added})
	})
	mux.HandleFunc("POST /v1/slack/errors", func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			Method       string         `json:"method"`
			Error        string         `json:"error"`
			RetryAfterMs int            `json:"retryAfterMs"`
			Extra        map[string]any `json:"extra"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil || q.Method == "" || q.Error == "" {
			writeError(w, http.StatusBadRequest, `the body must be {"method": "chat.postMessage", "error": "ratelimited" or a Slack error code, "retryAfterMs": milliseconds, "extra": {...}}`)
			return
		}
		if q.Error == "ratelimited" {
			p.c.slack.QueueRateLimit(q.Method, time.Duration(q.RetryAfterMs)*time.Millisecond)
		} else {
			p.c.slack.QueueError(q.Method, q.Error, q.Extra)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	p.fakeRoutes(mux)
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) { p.streamEvents(w, r) })
	mux.HandleFunc("POST /v1/events/{id}/release", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if !p.release(id) {
			writeError(w, http.StatusNotFound, "no held event "+r.PathValue("id")+": it was released, its request ended, or it was never held (ask for holds with GET /v1/events?hold=...)")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Fault
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
			writeError(w, http.StatusBadRequest, `the body must be a fault, such as {"kind": "reject_model_request"}: `+err.Error())
			return
		}
		id, err := p.AddFault(f)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]int64{"id": id})
	})
	mux.HandleFunc("GET /v1/faults", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Faults()) })
	mux.HandleFunc("DELETE /v1/faults", func(w http.ResponseWriter, r *http.Request) {
		p.ClearFaults()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/misses", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Misses()) })
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
		if err := p.init(); err != nil {
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
				writeError(w, rec.Code, r.Method+" "+r.URL.Path+": use "+allow)
				return
			}
			writeError(w, rec.Code, "no route "+r.Method+" "+r.URL.Path+": see go doc proxy.Proxy.Control")
			return
		}
		mux.ServeHTTP(w, r)
	})
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

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// fakeRoutes are the control API's calls that script the model rules in
// mode fake answer from, and read what it was asked.
func (p *Proxy) fakeRoutes(mux *http.ServeMux) {
	decode := func(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			writeError(w, http.StatusBadRequest, "the body must be "+shape+": "+err.Error())
			return false
		}
		return true
	}
	mux.HandleFunc("POST /v1/fakeai/respond", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Agent     fakeai.Agent      `json:"agent"`
			Responses []fakeai.Response `json:"responses"`
		}
		if !decode(w, r, &body, `{"agent": {"name", "systemPrefix", "systemContains", "tools", "model", "purpose"}, "responses": [{"text"} | {"output"} | {"toolCalls", "then"} | {"truncated"} | {"providerError"}]}`) {
			return
		}
		if err := body.Agent.Validate(); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		if len(body.Responses) == 0 {
			writeError(w, http.StatusBadRequest, `a script needs at least one response in "responses"`)
			return
		}
		p.c.fake.Respond(body.Agent, body.Responses...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/fakeai/calls", func(w http.ResponseWriter, r *http.Request) {
		calls := p.c.fake.AllCalls()
		if name := r.URL.Query().Get("agent"); name != "" {
			calls = p.c.fake.Calls(fakeai.Agent{Name: name})
		}
		writeJSON(w, map[string]any{"calls": calls, "failures": p.c.fake.Failures()})
	})
	mux.HandleFunc("POST /v1/fakeai/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Vectors [][]float32 `json:"vectors"`
		}
		if !decode(w, r, &body, `{"vectors": [[0.1, 0.2], ...]}`) {
			return
		}
		p.c.fake.RespondEmbeddings(body.Vectors...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/fakeai/embeddings", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.c.fake.EmbedCalls()) })
	mux.HandleFunc("POST /v1/fakeai/images", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Images [][]byte `json:"images"`
		}
		if !decode(w, r, &body, `{"images": ["<base64>", ...]}`) {
			return
		}
		p.c.fake.RespondImages(body.Images...)
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/fakeai/images", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.c.fake.ImageCalls()) })
	mux.HandleFunc("DELETE /v1/fakeai", func(w http.ResponseWriter, r *http.Request) {
		// A reset inside a scope would lose the failures the scope is
		// counting from.
		if sc := p.currentScope(); sc != nil {
			writeError(w, http.StatusConflict, fmt.Sprintf("scope %q is open: end it before resetting the scripted model", sc.name))
			return
		}
		p.c.fake.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
}
