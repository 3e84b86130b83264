package proxy

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
)

// Control returns the control API of the proxy, for tests in any language
// to drive it. Every call needs "Authorization: Bearer <token>"; calls from
// anywhere but loopback are refused.
//
//	POST /v1/scopes            {"name": "..."}     open a test scope
//	POST /v1/scopes/{name}/end {"passed": bool}    end it: {"missed": N, "recorded": N}
//	GET  /v1/stats                                 counts
//	GET  /v1/misses                                replay misses, with their nearest recordings
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
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, res)
		}
	})
	mux.HandleFunc("GET /v1/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, p.Stats()) })
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
		mux.ServeHTTP(w, r)
	})
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
