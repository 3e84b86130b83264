package slackio

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// signatureWindow is how old a signed Slack request may be.
const signatureWindow = 5 * time.Minute

// Sign returns the x-slack-signature of body at ts, for a client (a
// test, curl) that posts Slack events.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	io.WriteString(mac, "v0:"+strconv.FormatInt(ts, 10)+":")
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// ErrUnsigned is what Verify returns for a request Slack did not sign;
// the route answers 401 with its text.
var ErrUnsigned = errors.New("not signed by Slack")

// Verify checks that h's signature headers sign body with secret, at a
// time within signatureWindow of now.
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: x-slack-request-timestamp is missing or not Unix seconds", ErrUnsigned)
	}
	if age := now.Sub(time.Unix(ts, 0)); age > signatureWindow || age < -signatureWindow {
		return fmt.Errorf("%w: x-slack-request-timestamp is outside the 5-minute window", ErrUnsigned)
	}
	if !hmac.Equal([]byte(Sign(secret, ts, body)), []byte(h.Get("X-Slack-Signature"))) {
		return fmt.Errorf("%w: x-slack-signature does not match the body", ErrUnsigned)
	}
	return nil
}

// Envelope is an Events API request.
type Envelope struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	Event     Event  `json:"event"`
}

// Event is the event an Envelope carries.
type Event struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
}

var mention = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// Mentions says whether text mentions someone (<@U…>).
func Mentions(text string) bool { return mention.MatchString(text) }

// StripMentions removes the mention markup from text.
func StripMentions(text string) string { return mention.ReplaceAllString(text, "") }

// Thread is the thread an event belongs to: its thread_ts, or its own
// ts when it starts one.
func (e Event) Thread() string {
	if e.ThreadTS != "" {
		return e.ThreadTS
	}
	return e.TS
}
