// Package slack is an in-process mock of the Slack Web API methods an agent
// uses, with state: channels, threads, messages with their ts, reactions
// and users. The recording proxy serves it for Slack's route in mode
// "mock"; tests seed it, queue errors and rate limits, and read every
// call it got. A method it does not know answers
// {"ok": false, "error": "unknown_method"} and is reported by Unknown, so a
// test can fail on it: nothing is silently accepted.
package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// User is a workspace member.
type User struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	RealName string `json:"real_name"`
	Email    string `json:"email,omitempty"`
	IsBot    bool   `json:"is_bot,omitempty"`
	TZ       string `json:"tz,omitempty"`
}

// Channel is a conversation: a channel, a private channel or a DM.
type Channel struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	IsPrivate bool   `json:"is_private,omitempty"`
	IsIM      bool   `json:"is_im,omitempty"`
	// NotMember makes posts fail with not_in_channel, as when the bot was
	// never invited.
	NotMember bool `json:"not_member,omitempty"`
}

// Message is a message in a channel; ThreadTS is set on thread replies
// (and on a parent that has replies).
type Message struct {
	TS        string              `json:"ts"`
	ThreadTS  string              `json:"thread_ts,omitempty"`
	User      string              `json:"user,omitempty"`
	BotID     string              `json:"bot_id,omitempty"`
	Text      string              `json:"text"`
	Blocks    json.RawMessage     `json:"blocks,omitempty"`
	Reactions map[string][]string `json:"-"` // name -> users
	Ephemeral string              `json:"-"` // the user who alone sees it
	Deleted   bool                `json:"-"`
}

// Call is one request the mock got.
type Call struct {
	Method string            `json:"method"`
	Params map[string]string `json:"params"`
	Time   time.Time         `json:"time"`
}

// queued is an error a method returns the next time it is called.
type queued struct {
	status     int
	retryAfter int
	body       map[string]any
}

// Mock is the Slack Web API mock. The zero value is not usable; use New.
type Mock struct {
	// TeamID, TeamDomain, BotUserID and BotID describe the workspace and
	// the bot the agent is.
	TeamID, TeamDomain, BotUserID, BotID string

	mu         sync.Mutex
	users      map[string]*User
	channels   map[string]*Channel
	messages   map[string][]*Message
	calls      []Call
	queue      map[string][]queued
	unknown    []string
	subscribed map[string]bool // channel/thread_ts
	statuses   map[string]string
	tick       int64
	now        func() time.Time
}

// New returns an empty mock of team TEVAL with bot user UBOT.
func New() *Mock {
	return &Mock{TeamID: "TEVAL", TeamDomain: "agentvcr-test", BotUserID: "UBOT000001", BotID: "BBOT000001",
		users: map[string]*User{}, channels: map[string]*Channel{}, messages: map[string][]*Message{},
		queue: map[string][]queued{}, subscribed: map[string]bool{}, statuses: map[string]string{}, now: time.Now}
}

// AddUser adds or replaces a user.
func (m *Mock) AddUser(u User) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.users[u.ID] = &u
}

// AddChannel adds or replaces a channel.
func (m *Mock) AddChannel(c Channel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.channels[c.ID] = &c
}

// AddMessage seeds a message, as history the agent will read; it makes the
// channel if needed and gives the message a ts if it has none.
func (m *Mock) AddMessage(channel string, msg Message) Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.channels[channel] == nil {
		m.channels[channel] = &Channel{ID: channel, Name: strings.ToLower(channel)}
	}
	if msg.TS == "" {
		msg.TS = m.nextTS()
	}
	m.insert(channel, &msg)
	return msg
}

// Subscribe marks a thread as one the agent follows.
func (m *Mock) Subscribe(channel, threadTS string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.subscribed[channel+"/"+threadTS] = true
}

// Subscribed reports whether a thread is followed.
func (m *Mock) Subscribed(channel, threadTS string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.subscribed[channel+"/"+threadTS]
}

// QueueError makes the next call of method answer {"ok": false, "error":
// code} with HTTP 200, as Slack does; extra fields (such as needed and
// provided for missing_scope) go into the body.
func (m *Mock) QueueError(method, code string, extra map[string]any) {
	body := map[string]any{"ok": false, "error": code}
	for k, v := range extra {
		body[k] = v
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue[method] = append(m.queue[method], queued{status: http.StatusOK, body: body})
}

// QueueRateLimit makes the next call of method answer 429 with
// Retry-After: retryAfter in whole seconds, rounded up as the faults'
// Retry-After is, so that less than a second still asks the client to
// wait (a Slack client that sees no Retry-After gives up).
func (m *Mock) QueueRateLimit(method string, retryAfter time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue[method] = append(m.queue[method], queued{status: http.StatusTooManyRequests,
		retryAfter: int((max(retryAfter, 0) + time.Second - 1) / time.Second), body: map[string]any{"ok": false, "error": "ratelimited"}})
}

// Calls returns the calls of method, or all calls for "". Like every
// list the mock returns, it is empty, not nil, when there are none: the
// control API answers it as [] for clients in any language.
func (m *Mock) Calls(method string) []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Call{}
	for _, c := range m.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Unknown returns the methods called that the mock does not know: each one
// a test failure.
func (m *Mock) Unknown() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string{}, m.unknown...)
}

// Messages returns the messages of a channel that everyone sees, oldest
// first.
func (m *Mock) Messages(channel string) []Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Message{}
	for _, msg := range m.messages[channel] {
		if !msg.Deleted && msg.Ephemeral == "" {
			out = append(out, *msg)
		}
	}
	return out
}

// Status returns the assistant status of a thread.
func (m *Mock) Status(channel, threadTS string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statuses[channel+"/"+threadTS]
}

// nextTS makes a Slack ts that grows with every call.
func (m *Mock) nextTS() string {
	m.tick++
	return fmt.Sprintf("%d.%06d", m.now().Unix(), m.tick)
}

func (m *Mock) insert(channel string, msg *Message) {
	list := append(m.messages[channel], msg)
	slices.SortStableFunc(list, func(a, b *Message) int { return compareTS(a.TS, b.TS) })
	m.messages[channel] = list
}

func compareTS(a, b string) int {
	fa, _ := strconv.ParseFloat(a, 64)
	fb, _ := strconv.ParseFloat(b, 64)
	switch {
	case fa < fb:
		return -1
	case fa > fb:
		return 1
	}
	return strings.Compare(a, b)
}

func (m *Mock) find(channel, ts string) *Message {
	for _, msg := range m.messages[channel] {
		if msg.TS == ts && !msg.Deleted {
			return msg
		}
	}
	return nil
}
