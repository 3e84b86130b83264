package slackio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"
)

// Client calls Slack's Web API for the agent.
type Client struct {
	api *slack.Client
	log *slog.Logger
}

// New is a Client with the bot token, through hc, at apiURL (Slack's, or
// a mock's); log, if not nil, gets the rate limits it waits out.
func New(token, apiURL string, hc *http.Client, log *slog.Logger) *Client {
	return &Client{api: slack.New(token, slack.OptionHTTPClient(hc), slack.OptionAPIURL(apiURL)), log: log}
}

// Post sends text to channel, in thread when it is not "", waiting out
// Slack's rate limit (Retry-After) while ctx lasts, as Slack asks
// clients to; it returns the message's ts.
func (c *Client) Post(ctx context.Context, channel, thread, text string) (string, error) {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	for {
		_, ts, err := c.api.PostMessageContext(ctx, channel, opts...)
		var limited *slack.RateLimitedError
		if !errors.As(err, &limited) {
			return ts, err
		}
		if c.log != nil {
			c.log.Info("chat.postMessage is rate limited; retrying", "after", limited.RetryAfter)
		}
		select {
		case <-time.After(limited.RetryAfter):
		case <-ctx.Done():
			return "", err
		}
	}
}

// PostPrivate sends text to user alone, in channel's thread.
func (c *Client) PostPrivate(ctx context.Context, channel, thread, user, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	_, err := c.api.PostEphemeralContext(ctx, channel, user, opts...)
	return err
}

// SetStatus sets the assistant thread's status line ("" clears it).
// A status is a courtesy: its failure is not the turn's.
func (c *Client) SetStatus(ctx context.Context, channel, thread, status string) {
	c.api.SetAssistantThreadsStatusContext(ctx, slack.AssistantThreadsSetStatusParameters{
		ChannelID: channel, ThreadTS: thread, Status: status})
}

// React adds the reaction name to the message at ts; a reaction is a
// courtesy too.
func (c *Client) React(ctx context.Context, channel, ts, name string) {
	c.api.AddReactionContext(ctx, name, slack.ItemRef{Channel: channel, Timestamp: ts})
}

// User reads a user's profile.
func (c *Client) User(ctx context.Context, id string) (*slack.User, error) {
	return c.api.GetUserInfoContext(ctx, id)
}

// Thread reads the messages of a thread as lines a model reads:
// "<@user> (ts): text".
func (c *Client) Thread(ctx context.Context, channel, thread string) (string, error) {
	msgs, _, _, err := c.api.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread})
	if err != nil {
		return "", fmt.Errorf("conversations.replies: %w", err)
	}
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<@%s> (%s): %s\n", m.User, m.Timestamp, m.Text)
	}
	return b.String(), nil
}
