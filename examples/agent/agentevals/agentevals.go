package agentevals

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/agentvcr/agentvcr/evals"
	"github.com/agentvcr/agentvcr/examples/agent/agenttest"
	agent "github.com/agentvcr/agentvcr/examples/agent/app"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/pricing"
)

//go:embed cases.jsonl
var files embed.FS

// The models the agent uses by default and in the "haiku" variant, as
// the gateway names them.
const (
	Sonnet = agent.DefaultAgentModel
	Haiku  = "anthropic/claude-haiku-4.5"
)

// Prices are the models' list prices in US dollars per million tokens
// (input, output, cache read, cache write). Check them against your
// provider's before trusting a total.
var Prices = pricing.Table{
	Sonnet: {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
	Haiku:  {InputPerMTok: 1, OutputPerMTok: 5, CacheReadPerMTok: 0.10, CacheWritePerMTok: 1.25},
}

// Answers is the eval of the agent's answers. gatewayKey is the model
// gateway's API key (AI_GATEWAY_API_KEY) the agent calls the model
// with; opts are added to each attempt's fixture (a test's stand-in
// gateway, say).
func Answers(gatewayKey string, opts ...fixture.Option) evals.Eval {
	return evals.Eval{
		Name:    "answers",
		App:     App(gatewayKey),
		Options: opts,
		Cases:   evals.FromFS(files, "cases.jsonl"),
		Input: func(c evals.Case) fixture.Input {
			if c.HasTag("web") {
				return fixture.WebMessage(c.Text())
			}
			return fixture.SlackMention(c.Text())
		},
		Grade: Grade,
		Metrics: []evals.Metric{
			{ID: "correct", Kind: evals.Binary, Description: "the reply the agent delivered holds the expected answer"},
			{ID: "replied", Kind: evals.Binary, Description: "the agent stored exactly one reply"},
			{ID: "tool_calls", Kind: evals.Count, Description: "tool results the agent stored"},
		},
		Prices: Prices,
		Preflight: func(context.Context, evals.Case) error {
			if gatewayKey == "" {
				return fmt.Errorf("%w: AI_GATEWAY_API_KEY is not set: the agent calls the real model through the AI gateway (--dry-run and --list need none)", evals.ErrMissingCredential)
			}
			return nil
		},
		Variants: []evals.Variant{
			{Name: "haiku", Description: "the agent loop on the fast model", Env: map[string]string{"AGENT_MODEL": Haiku}},
		},
	}
}

// App is the reference agent, in-process, as a fixture starts it, calling
// the model through the AI gateway with gatewayKey.
func App(gatewayKey string) fixture.App {
	return agenttest.App(map[string]string{"AI_GATEWAY_API_KEY": gatewayKey})
}

// Grade scores an attempt from its end state: the delivered reply (in
// the Slack thread for a Slack conversation, else the stored one), the
// replies and the tool results the database holds.
func Grade(ctx context.Context, r evals.Result, c evals.Case) (map[string]float64, error) {
	stored, tools, err := storedRows(ctx, r.Fixture.DatabaseURL(), r.Conversation.ID)
	if err != nil {
		return nil, err
	}
	delivered := stored
	if channel, thread, ok := slackThread(r.Conversation.ID); ok {
		delivered = nil
		for _, m := range r.Fixture.Slack().Messages(channel) {
			if m.ThreadTS == thread && m.BotID != "" && !m.Deleted {
				delivered = append(delivered, m.Text)
			}
		}
	}
	correct := 0.0
	if len(delivered) > 0 && strings.Contains(squash(delivered[len(delivered)-1]), squash(c.ExpectedText())) {
		correct = 1
	}
	replied := 0.0
	if len(stored) == 1 {
		replied = 1
	}
	return map[string]float64{"correct": correct, "replied": replied, "tool_calls": float64(tools)}, nil
}

// storedRows reads the conversation's assistant replies and counts its
// tool results, as the agent stored them.
func storedRows(ctx context.Context, url, id string) (replies []string, tools int, err error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, 0, fmt.Errorf("the agent's database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT type, coalesce(payload->>'text', '') FROM junior_conversation_events
		WHERE conversation_id = $1 AND (type = 'tool_result' OR (type = 'message' AND payload->>'role' = 'assistant')) ORDER BY seq`, id)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var typ, text string
		if err := rows.Scan(&typ, &text); err != nil {
			return nil, 0, err
		}
		if typ == "tool_result" {
			tools++
		} else {
			replies = append(replies, text)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(replies) == 0 && tools == 0 {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM junior_conversations WHERE conversation_id = $1`, id).Scan(&n); err != nil {
			return nil, 0, err
		}
		if n == 0 {
			return nil, 0, errors.New("conversation " + id + " is not in the agent's database")
		}
	}
	return replies, tools, nil
}

// slackThread reads a Slack conversation's id: slack:<channel>:<thread>.
func slackThread(id string) (channel, thread string, ok bool) {
	rest, ok := strings.CutPrefix(id, "slack:")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

// squash folds case and drops spaces, so that "2,7,9" holds "2, 7, 9".
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}
