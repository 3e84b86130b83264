package turn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentvcr/agentvcr/examples/agent/junior"
	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// UserAgent is what webFetch sends, Junior's, so a proxy rule can tell
// its requests from the model's.
const UserAgent = "junior-bot/0.1"

// The tools the agent offers the model.
const (
	toolWebFetch     = "webFetch"
	toolSlackThread  = "slackThreadRead"
	toolGitHubIssues = "githubIssues"
)

func (r *Runner) tools() []anthropic.ToolUnionParam {
	tool := func(name, desc string, props map[string]any, required ...string) anthropic.ToolUnionParam {
		return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: name, Description: anthropic.String(desc),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: props, Required: required}}}
	}
	str := map[string]any{"type": "string"}
	return []anthropic.ToolUnionParam{
		tool(toolWebFetch, "Fetch a public web page by URL and return its text.", map[string]any{"url": str}, "url"),
		tool(toolSlackThread, "Read the messages of the Slack thread this conversation is in.", map[string]any{}),
		tool(toolGitHubIssues, "Search the user's GitHub issues. Needs the user to connect GitHub.", map[string]any{"query": str}, "query"),
	}
}

// callTool runs a tool. It returns the text the model gets and whether
// it is an error; or, for a tool that needs a credential the user has not
// given, the authorization the turn now waits for; err is a failure of
// the store, which fails the turn.
func (r *Runner) callTool(ctx context.Context, t *turnState, conv store.Conversation, c toolCall) (out string, isErr bool, authorization string, err error) {
	var in struct {
		URL   string `json:"url"`
		Query string `json:"query"`
	}
	json.Unmarshal(c.Input, &in)
	switch c.Name {
	case toolWebFetch:
		text, err := r.webFetch(ctx, in.URL)
		if err != nil {
			return err.Error(), true, "", nil
		}
		return text, false, "", nil
	case toolSlackThread:
		p := t.inputs[0].Place
		if p.Channel == "" || p.ThreadTS == "" {
			return "This conversation is not in a Slack thread.", true, "", nil
		}
		thread, err := r.slack.Thread(ctx, p.Channel, p.ThreadTS)
		if err != nil {
			return err.Error(), true, "", nil
		}
		return thread, false, "", nil
	case toolGitHubIssues:
		subject := t.inputs[0].Author.UserID
		token, err := r.st.Credential(ctx, subject, "github")
		if err != nil {
			return err.Error(), true, "", nil
		}
		if token == "" {
			authz, err := r.requestAuthorization(ctx, t, conv, subject)
			return "", false, authz, err
		}
		out, isErr := r.githubIssues(ctx, token, in.Query)
		return out, isErr, "", nil
	}
	return fmt.Sprintf("unknown tool %q", c.Name), true, "", nil
}

// webFetch GETs a public page with the agent's user agent, at most 256
// KiB of it, within 8 s.
func (r *Runner) webFetch(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("webFetch: %q is not an http(s) URL", raw)
	}
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := r.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("webFetch %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
	if err != nil {
		return "", fmt.Errorf("webFetch %s: %w", u.Redacted(), err)
	}
	if resp.StatusCode >= 400 {
		return "", fmt.Errorf("webFetch %s: %s", u.Redacted(), resp.Status)
	}
	return string(b), nil
}

func (r *Runner) githubIssues(ctx context.Context, token, query string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(r.cfg.GitHubAPI, "/")+"/search/issues?q="+url.QueryEscape(query), nil)
	if err != nil {
		return err.Error(), true
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := r.http.Do(req)
	if err != nil {
		return "GitHub: " + err.Error(), true
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
	if resp.StatusCode != http.StatusOK {
		return "GitHub: " + resp.Status, true
	}
	return string(b), false
}

// requestAuthorization writes the authorization_requested row, sends the
// user a private link (an ephemeral Slack message, or the web's pending
// messages) and returns the authorization id the turn waits for.
func (r *Runner) requestAuthorization(ctx context.Context, t *turnState, conv store.Conversation, subject string) (string, error) {
	b := make([]byte, 12)
	rand.Read(b)
	id := "authz_" + hex.EncodeToString(b)
	link := r.authorizationURL(id)
	if err := r.append(t.conv, junior.AuthorizationRequested("github", subject, id)); err != nil {
		return "", err
	}
	if p := t.inputs[0].Place; p.Channel != "" && t.inputs[0].Surface == "slack" {
		if err := r.slack.PostPrivate(ctx, p.Channel, p.ThreadTS, subject, "Connect GitHub to continue: "+link); err != nil {
			r.logf(0, "turn %s: chat.postEphemeral: %v", t.turnID, err)
		}
	}
	r.mu.Lock()
	r.pending[conv.ID] = pendingAuth{id: id, url: link}
	r.mu.Unlock()
	return id, nil
}

func (r *Runner) authorizationURL(id string) string {
	q := url.Values{"client_id": {"junior-example"}, "state": {id},
		"redirect_uri": {strings.TrimSuffix(r.cfg.PublicURL, "/") + "/api/oauth/callback/github"}}
	return "https://github.com/login/oauth/authorize?" + q.Encode()
}

// pendingAuth is the authorization a web conversation shows.
type pendingAuth struct{ id, url string }
