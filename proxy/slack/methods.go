package slack

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

type result map[string]any

// fail is a Slack error answer: HTTP 200, {"ok": false, "error": code}.
func fail(code string) result { return result{"ok": false, "error": code} }

type handler func(m *Mock, p map[string]string) result

var methods = map[string]handler{
	"auth.test":                             (*Mock).authTest,
	"chat.postMessage":                      (*Mock).postMessage,
	"chat.update":                           (*Mock).update,
	"chat.delete":                           (*Mock).delete,
	"chat.postEphemeral":                    (*Mock).postEphemeral,
	"chat.getPermalink":                     (*Mock).getPermalink,
	"reactions.add":                         (*Mock).reactionsAdd,
	"reactions.remove":                      (*Mock).reactionsRemove,
	"conversations.replies":                 (*Mock).replies,
	"conversations.history":                 (*Mock).history,
	"conversations.info":                    (*Mock).conversationInfo,
	"users.info":                            (*Mock).usersInfo,
	"users.list":                            (*Mock).usersList,
	"users.lookupByEmail":                   (*Mock).lookupByEmail,
	"assistant.threads.setStatus":           (*Mock).setStatus,
	"assistant.threads.setTitle":            (*Mock).okThread,
	"assistant.threads.setSuggestedPrompts": (*Mock).okThread,
	"views.publish":                         (*Mock).viewsPublish,
	"files.info":                            (*Mock).filesInfo,
	"files.getUploadURLExternal":            (*Mock).getUploadURL,
	"files.completeUploadExternal":          (*Mock).completeUpload,
}

// ServeHTTP answers POST (or GET) /api/<method>.
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	p, token, err := wire.SlackParams(r)
	if err != nil {
		code := "invalid_form_data"
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			code = "invalid_json"
		}
		writeResult(w, http.StatusOK, fail(code))
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, Call{Method: method, Params: p, Time: m.now()})
	h, ok := methods[method]
	if !ok {
		m.unknown = append(m.unknown, method)
		writeResult(w, http.StatusOK, fail("unknown_method"))
		return
	}
	if q := m.queue[method]; len(q) > 0 {
		m.queue[method] = q[1:]
		if q[0].retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(q[0].retryAfter))
		}
		writeResult(w, q[0].status, q[0].body)
		return
	}
	if token == "" {
		writeResult(w, http.StatusOK, fail("not_authed"))
		return
	}
	if !strings.HasPrefix(token, "xox") {
		writeResult(w, http.StatusOK, fail("invalid_auth"))
		return
	}
	writeResult(w, http.StatusOK, h(m, p))
}

func writeResult(w http.ResponseWriter, status int, res result) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(res)
}

func (m *Mock) authTest(map[string]string) result {
	return result{"ok": true, "url": "https://" + m.TeamDomain + ".slack.com/", "team": m.TeamDomain, "user": "agent",
		"team_id": m.TeamID, "user_id": m.BotUserID, "bot_id": m.BotID}
}

// channel returns a channel the bot may post to, or the error Slack gives.
func (m *Mock) channel(id string, post bool) (*Channel, result) {
	c := m.channels[id]
	if c == nil {
		return nil, fail("channel_not_found")
	}
	if post && c.NotMember {
		return nil, fail("not_in_channel")
	}
	return c, nil
}

func (m *Mock) messageJSON(msg *Message) result {
	out := result{"type": "message", "ts": msg.TS, "text": msg.Text}
	if msg.User != "" {
		out["user"] = msg.User
	}
	if msg.BotID != "" {
		out["bot_id"] = msg.BotID
	}
	if msg.ThreadTS != "" {
		out["thread_ts"] = msg.ThreadTS
	}
	if len(msg.Blocks) > 0 {
		out["blocks"] = msg.Blocks
	}
	if len(msg.Reactions) > 0 {
		var rs []result
		for name, users := range msg.Reactions {
			rs = append(rs, result{"name": name, "users": users, "count": len(users)})
		}
		out["reactions"] = rs
	}
	return out
}

func (m *Mock) postMessage(p map[string]string) result {
	if _, errRes := m.channel(p["channel"], true); errRes != nil {
		return errRes
	}
	if p["text"] == "" && p["blocks"] == "" && p["attachments"] == "" {
		return fail("no_text")
	}
	if ts := p["thread_ts"]; ts != "" && m.find(p["channel"], ts) == nil {
		return fail("thread_not_found")
	}
	msg := &Message{TS: m.nextTS(), ThreadTS: p["thread_ts"], User: m.BotUserID, BotID: m.BotID, Text: p["text"]}
	if b := p["blocks"]; b != "" && json.Valid([]byte(b)) {
		msg.Blocks = json.RawMessage(b)
	}
	m.insert(p["channel"], msg)
	return result{"ok": true, "channel": p["channel"], "ts": msg.TS, "message": m.messageJSON(msg)}
}

func (m *Mock) update(p map[string]string) result {
	if _, errRes := m.channel(p["channel"], true); errRes != nil {
		return errRes
	}
	msg := m.find(p["channel"], p["ts"])
	if msg == nil {
		return fail("message_not_found")
	}
	if msg.User != m.BotUserID {
		return fail("cant_update_message")
	}
	msg.Text = p["text"]
	return result{"ok": true, "channel": p["channel"], "ts": msg.TS, "text": msg.Text, "message": m.messageJSON(msg)}
}

func (m *Mock) delete(p map[string]string) result {
	msg := m.find(p["channel"], p["ts"])
	if msg == nil {
		return fail("message_not_found")
	}
	msg.Deleted = true
	return result{"ok": true, "channel": p["channel"], "ts": p["ts"]}
}

func (m *Mock) postEphemeral(p map[string]string) result {
	if _, errRes := m.channel(p["channel"], true); errRes != nil {
		return errRes
	}
	if m.users[p["user"]] == nil {
		return fail("user_not_in_channel")
	}
	msg := &Message{TS: m.nextTS(), ThreadTS: p["thread_ts"], User: m.BotUserID, BotID: m.BotID, Text: p["text"], Ephemeral: p["user"]}
	m.insert(p["channel"], msg)
	return result{"ok": true, "message_ts": msg.TS}
}

func (m *Mock) getPermalink(p map[string]string) result {
	if m.find(p["channel"], p["message_ts"]) == nil {
		return fail("message_not_found")
	}
	return result{"ok": true, "channel": p["channel"],
		"permalink": "https://" + m.TeamDomain + ".slack.com/archives/" + p["channel"] + "/p" + strings.ReplaceAll(p["message_ts"], ".", "")}
}

func (m *Mock) reactionsAdd(p map[string]string) result {
	msg := m.find(p["channel"], p["timestamp"])
	if msg == nil {
		return fail("message_not_found")
	}
	if msg.Reactions == nil {
		msg.Reactions = map[string][]string{}
	}
	for _, u := range msg.Reactions[p["name"]] {
		if u == m.BotUserID {
			return fail("already_reacted")
		}
	}
	msg.Reactions[p["name"]] = append(msg.Reactions[p["name"]], m.BotUserID)
	return result{"ok": true}
}

func (m *Mock) reactionsRemove(p map[string]string) result {
	msg := m.find(p["channel"], p["timestamp"])
	if msg == nil {
		return fail("message_not_found")
	}
	users := msg.Reactions[p["name"]]
	for i, u := range users {
		if u == m.BotUserID {
			msg.Reactions[p["name"]] = append(users[:i:i], users[i+1:]...)
			return result{"ok": true}
		}
	}
	return fail("no_reaction")
}

// visible lists the messages a reader sees: no deleted ones, no one else's
// ephemeral ones.
func (m *Mock) visible(channel string, keep func(*Message) bool) []result {
	var out []result
	for _, msg := range m.messages[channel] {
		if !msg.Deleted && msg.Ephemeral == "" && keep(msg) {
			out = append(out, m.messageJSON(msg))
		}
	}
	return out
}

func (m *Mock) replies(p map[string]string) result {
	if _, errRes := m.channel(p["channel"], false); errRes != nil {
		return errRes
	}
	parent := m.find(p["channel"], p["ts"])
	if parent == nil {
		return fail("thread_not_found")
	}
	msgs := m.visible(p["channel"], func(msg *Message) bool { return msg.TS == parent.TS || msg.ThreadTS == parent.TS })
	return result{"ok": true, "messages": msgs, "has_more": false}
}

func (m *Mock) history(p map[string]string) result {
	if _, errRes := m.channel(p["channel"], false); errRes != nil {
		return errRes
	}
	msgs := m.visible(p["channel"], func(msg *Message) bool { return msg.ThreadTS == "" || msg.ThreadTS == msg.TS })
	for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
		msgs[i], msgs[j] = msgs[j], msgs[i] // newest first, as Slack answers
	}
	return result{"ok": true, "messages": msgs, "has_more": false}
}

func (m *Mock) conversationInfo(p map[string]string) result {
	c, errRes := m.channel(p["channel"], false)
	if errRes != nil {
		return errRes
	}
	return result{"ok": true, "channel": result{"id": c.ID, "name": c.Name, "is_channel": !c.IsIM && !c.IsPrivate,
		"is_group": c.IsPrivate, "is_im": c.IsIM, "is_private": c.IsPrivate || c.IsIM, "is_member": !c.NotMember}}
}

func (m *Mock) userJSON(u *User) result {
	return result{"id": u.ID, "team_id": m.TeamID, "name": u.Name, "real_name": u.RealName, "is_bot": u.IsBot, "tz": u.TZ,
		"profile": result{"real_name": u.RealName, "display_name": u.Name, "email": u.Email}}
}

func (m *Mock) usersInfo(p map[string]string) result {
	u := m.users[p["user"]]
	if u == nil {
		return fail("user_not_found")
	}
	return result{"ok": true, "user": m.userJSON(u)}
}

func (m *Mock) usersList(map[string]string) result {
	var members []result
	for _, u := range m.users {
		members = append(members, m.userJSON(u))
	}
	return result{"ok": true, "members": members}
}

func (m *Mock) lookupByEmail(p map[string]string) result {
	for _, u := range m.users {
		if strings.EqualFold(u.Email, p["email"]) {
			return result{"ok": true, "user": m.userJSON(u)}
		}
	}
	return fail("users_not_found")
}

func (m *Mock) setStatus(p map[string]string) result {
	if _, errRes := m.channel(p["channel_id"], false); errRes != nil {
		return errRes
	}
	m.statuses[p["channel_id"]+"/"+p["thread_ts"]] = p["status"]
	return result{"ok": true}
}

func (m *Mock) okThread(p map[string]string) result {
	if _, errRes := m.channel(p["channel_id"], false); errRes != nil {
		return errRes
	}
	return result{"ok": true}
}

func (m *Mock) viewsPublish(p map[string]string) result {
	if m.users[p["user_id"]] == nil {
		return fail("user_not_found")
	}
	return result{"ok": true, "view": result{"id": "V" + strconv.FormatInt(m.tick+1, 10), "type": "home"}}
}

func (m *Mock) filesInfo(p map[string]string) result {
	if p["file"] == "" {
		return fail("file_not_found")
	}
	return result{"ok": true, "file": result{"id": p["file"], "name": "file", "mimetype": "application/octet-stream"}}
}

func (m *Mock) getUploadURL(p map[string]string) result {
	m.tick++
	id := "F" + strconv.FormatInt(1000000000+m.tick, 10)
	return result{"ok": true, "upload_url": "https://files.slack.com/upload/v1/" + id, "file_id": id}
}

func (m *Mock) completeUpload(p map[string]string) result {
	var files []result
	if err := json.Unmarshal([]byte(p["files"]), &files); err != nil || len(files) == 0 {
		return fail("invalid_arguments")
	}
	return result{"ok": true, "files": files}
}
