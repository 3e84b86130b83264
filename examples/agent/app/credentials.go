package app

import (
	"encoding/json"
	"net/http"
	"strings"
)

// providers are those the agent's tools take a credential for.
var providers = []string{"github"}

// addCredential is POST /api/internal/credentials: store a user's token
// for a provider ({"user": email, "slackUserId", "provider", "token"};
// one of user and slackUserId at least), through the store function the
// OAuth callback uses, so that a turn of that user (on the web as user,
// in Slack as slackUserId) needs no authorization. It runs nothing.
func (a *App) addCredential(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User        string `json:"user"`
		SlackUserID string `json:"slackUserId"`
		Provider    string `json:"provider"`
		Token       string `json:"token"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body.Token == "" ||
		(body.User == "" && body.SlackUserID == "") || (body.User != "" && !strings.Contains(body.User, "@")) {
		writeError(w, http.StatusBadRequest, `the body must be {"user"?: an email, "slackUserId"?, "provider", "token"}, with user or slackUserId`)
		return
	}
	if strings.ContainsRune(body.User+body.SlackUserID+body.Provider+body.Token, 0) {
		writeError(w, http.StatusBadRequest, "a field holds a NUL character")
		return
	}
	known := false
	for _, p := range providers {
		known = known || p == body.Provider
	}
	if !known {
		writeError(w, http.StatusBadRequest, "no provider "+body.Provider+": the agent's tools take "+strings.Join(providers, ", "))
		return
	}
	var subjects []string
	if body.User != "" {
		subjects = append(subjects, webSubject(strings.ToLower(strings.TrimSpace(body.User))))
	}
	if body.SlackUserID != "" {
		subjects = append(subjects, body.SlackUserID)
	}
	for _, s := range subjects {
		if err := a.st.SaveCredential(r.Context(), s, body.Provider, body.Token); err != nil {
			a.internalError(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
