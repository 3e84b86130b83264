package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
	"github.com/agentvcr/agentvcr/examples/agent/turn"
)

// UserHeader names the signed-in web user by email, as Junior's fixture
// signs one in; NameHeader gives their name.
const (
	UserHeader = "X-Agent-User"
	NameHeader = "X-Agent-User-Name"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// internalError logs err and answers 500 without it: a database error's
// text is for the operator, not the caller.
func (a *App) internalError(w http.ResponseWriter, err error) {
	a.logf(slog.LevelError, "%v", err)
	writeError(w, http.StatusInternalServerError, "internal error; the agent's log has it")
}

func hash24(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:12])
}

// webUser is the signed-in user, or "" after answering 401.
func webUser(w http.ResponseWriter, r *http.Request) (turn.Author, bool) {
	email := strings.ToLower(strings.TrimSpace(r.Header.Get(UserHeader)))
	if email == "" || !strings.Contains(email, "@") {
		writeError(w, http.StatusUnauthorized, "sign in: send the user's email in "+UserHeader)
		return turn.Author{}, false
	}
	name := r.Header.Get(NameHeader)
	if name == "" {
		name = strings.SplitN(email, "@", 2)[0]
	}
	return turn.Author{Email: email, UserName: name, FullName: name, UserID: webSubject(email), Platform: "web"}, true
}

// webSubject is the user id of the web user email: whom their turns
// run as, and whose credentials they use.
func webSubject(email string) string { return "dashboard:" + hash24(email)[:16] }

type messageBody struct {
	IdempotencyKey string `json:"idempotencyKey"`
	Message        string `json:"message"`
	Visibility     string `json:"visibility"`
	Delivery       string `json:"delivery"`
}

func readMessage(w http.ResponseWriter, r *http.Request) (messageBody, bool) {
	var b messageBody
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&b); err != nil {
		writeError(w, http.StatusBadRequest, `the body must be {"idempotencyKey", "message"}: `+err.Error())
		return b, false
	}
	if b.IdempotencyKey == "" || strings.TrimSpace(b.Message) == "" {
		writeError(w, http.StatusBadRequest, `"idempotencyKey" and "message" are required`)
		return b, false
	}
	if strings.ContainsRune(b.Message+b.IdempotencyKey, 0) {
		writeError(w, http.StatusBadRequest, `"message" or "idempotencyKey" holds a NUL character, which no text column takes`)
		return b, false
	}
	return b, true
}

// createConversation is POST /api/conversations.
func (a *App) createConversation(w http.ResponseWriter, r *http.Request) {
	user, ok := webUser(w, r)
	if !ok {
		return
	}
	body, ok := readMessage(w, r)
	if !ok {
		return
	}
	id := "local:web:" + hash24(user.Email, body.IdempotencyKey)
	visibility := "private"
	if body.Visibility == "public" {
		visibility = "public"
	}
	src, _ := json.Marshal(map[string]any{"platform": "web", "conversationId": id, "visibility": visibility})
	act, _ := json.Marshal(map[string]any{"email": user.Email, "fullName": user.FullName})
	a.accept(w, r, id, user, body, &store.Conversation{ID: id, Source: "web", SourceJS: src, Actor: act})
}

// postMessage is POST /api/conversations/{id}/messages.
func (a *App) postMessage(w http.ResponseWriter, r *http.Request) {
	user, conv, ok := a.member(w, r)
	if !ok {
		return
	}
	id := conv.ID
	// A web message on a Slack conversation is a dashboard continue: the
	// turn runs on the api surface and its reply stays in the dashboard,
	// since the thread never saw the message it answers.
	if conv.Source != "web" && conv.Source != "slack" {
		writeError(w, http.StatusConflict, "conversation "+id+" is a "+conv.Source+" conversation: it takes no web messages")
		return
	}
	body, ok := readMessage(w, r)
	if !ok {
		return
	}
	a.accept(w, r, id, user, body, nil)
}

// accept writes the input's visible message row once (with the
// conversation's row, when create is set) and queues it.
func (a *App) accept(w http.ResponseWriter, r *http.Request, id string, user turn.Author, body messageBody, create *store.Conversation) {
	msgID := "api-msg:" + hash24(id, body.IdempotencyKey)
	payload := map[string]any{"meta": map[string]any{
		"author": map[string]any{"email": user.Email, "userId": user.UserID, "userName": user.UserName},
		"source": "web", "replied": false, "explicitMention": true},
		"role": "user", "text": body.Message, "messageId": msgID}
	row := junior.Message(msgID, payload)
	var seqs []int
	var err error
	if create != nil {
		seqs, err = a.st.Create(r.Context(), *create, row)
	} else {
		seqs, err = a.st.Append(r.Context(), id, row)
	}
	if err != nil {
		a.internalError(w, err)
		return
	}
	status := "accepted"
	if len(seqs) == 0 {
		status = "duplicate"
	} else {
		a.turns.Enqueue(id, turn.Input{MessageID: msgID, Text: body.Message, Author: user, Surface: "api", Payload: payload})
		if seqs[0] == 0 {
			a.title(id, body.Message) // the conversation's first message names it
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"conversationId": id, "messageId": msgID, "status": status})
}

// member reads the signed-in user and the conversation of the route's
// path, which they must take part in.
func (a *App) member(w http.ResponseWriter, r *http.Request) (turn.Author, store.Conversation, bool) {
	user, ok := webUser(w, r)
	if !ok {
		return user, store.Conversation{}, false
	}
	conv, ok := a.participant(w, r, r.PathValue("id"), user)
	return user, conv, ok
}

// participant reads the conversation and checks the user takes part in
// it: its actor, or the author of one of its messages.
func (a *App) participant(w http.ResponseWriter, r *http.Request, id string, user turn.Author) (store.Conversation, bool) {
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		writeError(w, http.StatusNotFound, "no such conversation")
		return store.Conversation{}, false
	}
	conv, err := a.st.Conversation(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, err.Error())
		return conv, false
	}
	if err != nil {
		a.internalError(w, err)
		return conv, false
	}
	var act struct{ Email string }
	json.Unmarshal(conv.Actor, &act)
	if strings.EqualFold(act.Email, user.Email) {
		return conv, true
	}
	events, err := a.st.Events(r.Context(), id)
	if err != nil {
		a.internalError(w, err)
		return conv, false
	}
	for _, e := range events {
		if e.Type != "message" {
			continue
		}
		var m struct {
			Meta struct{ Author struct{ Email string } }
		}
		json.Unmarshal(e.Payload, &m)
		if strings.EqualFold(m.Meta.Author.Email, user.Email) {
			return conv, true
		}
	}
	writeError(w, http.StatusForbidden, user.Email+" takes no part in conversation "+id)
	return conv, false
}

// fork is POST /api/conversations/{id}/forks.
func (a *App) fork(w http.ResponseWriter, r *http.Request) {
	user, conv, ok := a.member(w, r)
	if !ok {
		return
	}
	src := conv.ID
	var body struct {
		IdempotencyKey string `json:"idempotencyKey"`
		MessageID      string `json:"messageId"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body.IdempotencyKey == "" || body.MessageID == "" ||
		strings.ContainsRune(body.IdempotencyKey+body.MessageID, 0) {
		writeError(w, http.StatusBadRequest, `the body must be {"idempotencyKey", "messageId"}, without NUL characters`)
		return
	}
	key, _ := json.Marshal([]string{"fork", src, body.IdempotencyKey})
	id := "local:web:" + hash24(user.Email, string(key))
	visibility := "private"
	var s struct{ Visibility string }
	if json.Unmarshal(conv.SourceJS, &s) == nil && s.Visibility == "public" {
		visibility = "public"
	}
	srcJSON, _ := json.Marshal(map[string]any{"platform": "web", "conversationId": id, "visibility": visibility})
	act, _ := json.Marshal(map[string]any{"email": user.Email, "fullName": user.FullName})
	_, err := a.st.Fork(r.Context(), src, body.MessageID, store.Conversation{ID: id, Source: "web", SourceJS: srcJSON, Actor: act})
	switch {
	case errors.Is(err, store.ErrBadCutPoint):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, err.Error())
	case err != nil:
		a.internalError(w, err)
	default:
		writeJSON(w, http.StatusOK, map[string]string{"conversationId": id})
	}
}

// titlePrompt starts the title call, Junior's words.
const titlePrompt = "Generate a concise 5-8 word Slack conversation title for this message. Answer with the title only.\n\n"

// title names a new conversation from its first message, as background
// work the idle route waits for.
func (a *App) title(id, first string) {
	a.goBackground(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		t, err := a.gw.Complete(ctx, titlePrompt+first)
		if err != nil {
			a.logf(slog.LevelWarn, "title of %s: %v", id, err)
			return
		}
		if err := a.st.SetTitle(ctx, id, strings.Trim(t, "\"' \n")); err != nil {
			a.logf(slog.LevelWarn, "title of %s: %v", id, err)
		}
	})
}

func (a *App) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "service": "agentvcr-example-agent", "timestamp": time.Now().UTC().Format(time.RFC3339)})
}
