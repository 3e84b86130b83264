package fixtureservice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/judge"
	"github.com/agentvcr/agentvcr/proxy"
)

// The JSON bodies of the API. openapi.json describes each; the names are
// its schemas'.

// fixtureSpec is POST /v1/fixtures: the app and how to test it.
type fixtureSpec struct {
	Name          string            `json:"name"`
	App           appSpec           `json:"app"`
	ScriptedModel bool              `json:"scriptedModel"`
	Recordings    *recordingsSpec   `json:"recordings"`
	Allow         []string          `json:"allow"`
	IdleTimeoutMs int               `json:"idleTimeoutMs"`
	Reports       string            `json:"reports"`
	Agent         *agentOptionsSpec `json:"agent"`
}

type recordingsSpec struct {
	Dir  string `json:"dir"`
	Mode string `json:"mode"`
}

type appSpec struct {
	Name    string            `json:"name"`
	Command []string          `json:"command"`
	AddrEnv string            `json:"addrEnv"`
	Attach  bool              `json:"attach"`
	Env     map[string]string `json:"env"`
	Routes  routesSpec        `json:"routes"`
	// Options maps each typed agent option the app takes to the
	// environment variable that sets it.
	Options             map[string]optionSpec `json:"options"`
	SlackSigningSecret  string                `json:"slackSigningSecret"`
	SchedulerSecret     string                `json:"schedulerSecret"`
	AdminSecret         string                `json:"adminSecret"`
	GitHubWebhookSecret string                `json:"githubWebhookSecret"`
	EventSecret         string                `json:"eventSecret"`
	BotName             string                `json:"botName"`
	Model               string                `json:"model"`
}

// routesSpec is fixture.Routes: the preset "junior" is
// fixture.JuniorRoutes, and each route given replaces the preset's.
type routesSpec struct {
	Preset              string `json:"preset"`
	SlackEvents         string `json:"slackEvents"`
	CreateConversation  string `json:"createConversation"`
	PostMessage         string `json:"postMessage"`
	Fork                string `json:"fork"`
	Heartbeat           string `json:"heartbeat"`
	Report              string `json:"report"`
	PendingMessages     string `json:"pendingMessages"`
	OAuthCallback       string `json:"oauthCallback"`
	Idle                string `json:"idle"`
	Queue               string `json:"queue"`
	QueueHold           string `json:"queueHold"`
	QueueRelease        string `json:"queueRelease"`
	QueueHoldPaused     string `json:"queueHoldPaused"`
	Conversations       string `json:"conversations"`
	Automations         string `json:"automations"`
	Memories            string `json:"memories"`
	Credentials         string `json:"credentials"`
	Health              string `json:"health"`
	UserHeader          string `json:"userHeader"`
	GitHubWebhook       string `json:"githubWebhook"`
	Events              string `json:"events"`
	EventAutomations    string `json:"eventAutomations"`
	Watches             string `json:"watches"`
	SlackConversationID string `json:"slackConversationId"` // a template of {channel} and {threadTs}
}

// optionSpec is the variable that sets an agent option, and how a
// duration is written in it: ms (the default), s, or go (Go's "1m30s").
type optionSpec struct {
	Env      string `json:"env"`
	Duration string `json:"duration"`
}

// UnmarshalJSON takes "NAME" for {"env": "NAME"}.
func (o *optionSpec) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		return json.Unmarshal(b, &o.Env)
	}
	type plain optionSpec
	return json.Unmarshal(b, (*plain)(o))
}

type agentOptionsSpec struct {
	Limits                  limitsSpec `json:"limits"`
	SlackCrossActorSteering string     `json:"slackCrossActorSteering"`
}

type limitsSpec struct {
	TurnTimeoutMs       int64 `json:"turnTimeoutMs"`
	ToolCalls           int   `json:"toolCalls"`
	TurnSliceMs         int64 `json:"turnSliceMs"`
	ContextWindowTokens int   `json:"contextWindowTokens"`
	AutomatedTurns      int   `json:"automatedTurns"`
}

func (a *agentOptionsSpec) options() fixture.AgentOptions {
	if a == nil {
		return fixture.AgentOptions{}
	}
	l := a.Limits
	return fixture.AgentOptions{SlackCrossActorSteering: a.SlackCrossActorSteering, Limits: fixture.Limits{
		TurnTimeout: time.Duration(l.TurnTimeoutMs) * time.Millisecond, ToolCalls: l.ToolCalls,
		TurnSlice: time.Duration(l.TurnSliceMs) * time.Millisecond, ContextWindowTokens: l.ContextWindowTokens,
		AutomatedTurns: l.AutomatedTurns}}
}

// optionNames are the names options maps take, each with its value in
// an AgentOptions as its variable holds it ("" when unset).
var optionNames = []string{"turnTimeout", "toolCalls", "turnSlice", "contextWindowTokens", "automatedTurns", "slackCrossActorSteering"}

func optionValue(name string, o fixture.AgentOptions, duration string) string {
	d := func(v time.Duration) string {
		switch {
		case v == 0:
			return ""
		case duration == "go":
			return v.String()
		case duration == "s":
			return strconv.FormatFloat(v.Seconds(), 'f', -1, 64)
		default:
			return strconv.FormatFloat(float64(v)/float64(time.Millisecond), 'f', -1, 64)
		}
	}
	n := func(v int) string {
		if v == 0 {
			return ""
		}
		return strconv.Itoa(v)
	}
	switch name {
	case "turnTimeout":
		return d(o.Limits.TurnTimeout)
	case "toolCalls":
		return n(o.Limits.ToolCalls)
	case "turnSlice":
		return d(o.Limits.TurnSlice)
	case "contextWindowTokens":
		return n(o.Limits.ContextWindowTokens)
	case "automatedTurns":
		return n(o.Limits.AutomatedTurns)
	case "slackCrossActorSteering":
		return o.SlackCrossActorSteering
	}
	return ""
}

// app is the spec as a fixture.App, but for how it starts.
func (a appSpec) app() (fixture.App, error) {
	if a.Name == "" {
		return fixture.App{}, fmt.Errorf("app.name: name the app, for messages")
	}
	routes, err := a.Routes.routes()
	if err != nil {
		return fixture.App{}, err
	}
	app := fixture.App{Name: a.Name, Command: a.Command, AddrEnv: a.AddrEnv, Env: a.Env, Routes: routes,
		SlackSigningSecret: a.SlackSigningSecret, SchedulerSecret: a.SchedulerSecret, AdminSecret: a.AdminSecret,
		GitHubWebhookSecret: a.GitHubWebhookSecret, EventSecret: a.EventSecret, BotName: a.BotName, Model: a.Model}
	switch {
	case a.Attach && len(a.Command) > 0:
		return fixture.App{}, fmt.Errorf("app %s: give a command or attach, not both", a.Name)
	case !a.Attach && len(a.Command) == 0:
		return fixture.App{}, fmt.Errorf("app %s: give the command that starts it, or attach: true to start it yourself", a.Name)
	}
	for name, spec := range a.Options {
		if !slices.Contains(optionNames, name) {
			return fixture.App{}, fmt.Errorf("app %s: options: no agent option is named %q; they are %s", a.Name, name, strings.Join(optionNames, ", "))
		}
		if spec.Env == "" {
			return fixture.App{}, fmt.Errorf("app %s: options.%s: name the variable that sets it", a.Name, name)
		}
		switch spec.Duration {
		case "", "ms", "s", "go":
		default:
			return fixture.App{}, fmt.Errorf("app %s: options.%s.duration %q: use ms, s or go", a.Name, name, spec.Duration)
		}
	}
	if len(a.Options) > 0 {
		opts := a.Options
		app.Options = func(o fixture.AgentOptions) (map[string]string, error) {
			env := map[string]string{}
			for name, spec := range opts {
				if v := optionValue(name, o, spec.Duration); v != "" {
					env[spec.Env] = v
				}
			}
			return env, nil
		}
	}
	return app, nil
}

func (r routesSpec) routes() (fixture.Routes, error) {
	var out fixture.Routes
	switch r.Preset {
	case "":
	case "junior":
		out = fixture.JuniorRoutes()
	default:
		return out, fmt.Errorf("app.routes.preset %q: the one preset is junior", r.Preset)
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.SlackEvents, r.SlackEvents)
	set(&out.CreateConversation, r.CreateConversation)
	set(&out.PostMessage, r.PostMessage)
	set(&out.Fork, r.Fork)
	set(&out.Heartbeat, r.Heartbeat)
	set(&out.Report, r.Report)
	set(&out.PendingMessages, r.PendingMessages)
	set(&out.OAuthCallback, r.OAuthCallback)
	set(&out.Idle, r.Idle)
	set(&out.Queue, r.Queue)
	set(&out.QueueHold, r.QueueHold)
	set(&out.QueueRelease, r.QueueRelease)
	set(&out.QueueHoldPaused, r.QueueHoldPaused)
	set(&out.Conversations, r.Conversations)
	set(&out.Automations, r.Automations)
	set(&out.Memories, r.Memories)
	set(&out.Credentials, r.Credentials)
	set(&out.Health, r.Health)
	set(&out.UserHeader, r.UserHeader)
	set(&out.GitHubWebhook, r.GitHubWebhook)
	set(&out.Events, r.Events)
	set(&out.EventAutomations, r.EventAutomations)
	set(&out.Watches, r.Watches)
	if t := r.SlackConversationID; t != "" {
		if !strings.Contains(t, "{threadTs}") {
			return out, fmt.Errorf("app.routes.slackConversationId %q: a template with {channel} and {threadTs}", t)
		}
		out.SlackConversationID = func(channel, threadTS string) string {
			return strings.NewReplacer("{channel}", channel, "{threadTs}", threadTS).Replace(t)
		}
	}
	return out, nil
}

// options are the fixture.New options the spec asks for.
func (s fixtureSpec) options() ([]fixture.Option, error) {
	var opts []fixture.Option
	if s.ScriptedModel {
		opts = append(opts, fixture.ScriptedModel())
	}
	if r := s.Recordings; r != nil {
		mode := proxy.Mode("")
		if r.Mode != "" {
			m, err := proxy.ParseMode(r.Mode)
			if err != nil {
				return nil, fmt.Errorf("recordings.mode: %w", err)
			}
			mode = m
		}
		opts = append(opts, fixture.Recordings(r.Dir, mode))
	}
	if len(s.Allow) > 0 {
		for _, o := range s.Allow {
			if _, err := proxy.ParseOrigin(o); err != nil {
				return nil, fmt.Errorf("allow: %w", err)
			}
		}
		opts = append(opts, fixture.Allow(s.Allow...))
	}
	if s.IdleTimeoutMs < 0 {
		return nil, fmt.Errorf("idleTimeoutMs %d: want a positive number, or none for 60000", s.IdleTimeoutMs)
	}
	if s.IdleTimeoutMs > 0 {
		opts = append(opts, fixture.IdleTimeout(time.Duration(s.IdleTimeoutMs)*time.Millisecond))
	}
	opts = append(opts, fixture.Reports(s.Reports))
	if s.Agent != nil {
		opts = append(opts, fixture.Configure(s.Agent.options()))
	}
	return opts, nil
}

// inputSpec is an input: kind, and what that kind takes.
type inputSpec struct {
	Kind     string          `json:"kind"`
	Text     string          `json:"text"`
	By       *authorSpec     `json:"by"`
	DM       bool            `json:"dm"`
	Provider string          `json:"provider"`
	Event    string          `json:"event"`
	Source   string          `json:"source"`
	Type     string          `json:"type"`
	Resource string          `json:"resource"`
	Payload  json.RawMessage `json:"payload"`
	Inputs   []inputSpec     `json:"inputs"`
	Tools    []toolUseSpec   `json:"tools"`
	Path     string          `json:"path"`
}

type authorSpec struct {
	SlackID string `json:"slackId"`
	Handle  string `json:"handle"`
	Name    string `json:"name"`
	Email   string `json:"email"`
}

type toolUseSpec struct {
	Name   string `json:"name"`
	Input  any    `json:"input"`
	Result string `json:"result"`
}

// UnmarshalJSON takes an array of inputs for a batch of them.
func (in *inputSpec) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		in.Kind = "batch"
		return json.Unmarshal(b, &in.Inputs)
	}
	type plain inputSpec
	return json.Unmarshal(b, (*plain)(in))
}

var inputKinds = "slackMention, slackThreadMessage, webMessage, heartbeat, completeAuth, githubWebhook, event, or an array of them (a batch)"

func (in inputSpec) input() (fixture.Input, error) {
	var opts []fixture.InputOption
	if in.By != nil {
		opts = append(opts, fixture.By(in.By.SlackID, in.By.Handle, in.By.Name, in.By.Email))
	}
	if in.DM {
		opts = append(opts, fixture.InDM())
	}
	switch in.Kind {
	case "slackMention":
		return fixture.SlackMention(in.Text, opts...), nil
	case "slackThreadMessage":
		return fixture.SlackThreadMessage(in.Text, opts...), nil
	case "webMessage":
		return fixture.WebMessage(in.Text, opts...), nil
	case "heartbeat":
		return fixture.Heartbeat(), nil
	case "completeAuth":
		return fixture.CompleteAuth(in.Provider), nil
	case "githubWebhook":
		return fixture.GitHubWebhook(in.Event, []byte(in.Payload)), nil
	case "event":
		return fixture.Event(in.Source, in.Type, in.Resource, []byte(in.Payload)), nil
	case "batch":
		var batch []fixture.Input
		for i, b := range in.Inputs {
			x, err := b.input()
			if err != nil {
				return fixture.Input{}, fmt.Errorf("batch[%d]: %w", i, err)
			}
			batch = append(batch, x)
		}
		return fixture.Batch(batch...), nil
	}
	return fixture.Input{}, fmt.Errorf("input kind %q: use %s", in.Kind, inputKinds)
}

// item is a history item: an input of the kinds a history holds, or a
// reply.
func (in inputSpec) item() (history.Item, error) {
	switch in.Kind {
	case "slackMention":
		return history.SlackMention(in.Text), nil
	case "slackThreadMessage":
		return history.SlackThreadMessage(in.Text), nil
	case "webMessage":
		return history.WebMessage(in.Text), nil
	case "reply":
		var tools []history.ToolUse
		for _, t := range in.Tools {
			tools = append(tools, history.ToolUse{Name: t.Name, Input: t.Input, Result: t.Result})
		}
		return history.Reply(in.Text, tools...), nil
	}
	return history.Item{}, fmt.Errorf("history item kind %q: use slackMention, slackThreadMessage, webMessage, reply or recorded", in.Kind)
}

// historyItems groups the items: each recorded file alone, and the built
// items between them as one Built.
func historyItems(items []inputSpec) ([]fixture.HistoryItem, error) {
	var out []fixture.HistoryItem
	var built []history.Item
	flush := func() {
		if len(built) > 0 {
			out = append(out, fixture.Built(built...))
			built = nil
		}
	}
	for i, it := range items {
		if it.Kind == "recorded" {
			if it.Path == "" {
				return nil, fmt.Errorf("history[%d]: a recorded item needs the path of its file", i)
			}
			flush()
			out = append(out, fixture.Recorded(it.Path))
			continue
		}
		x, err := it.item()
		if err != nil {
			return nil, fmt.Errorf("history[%d]: %w", i, err)
		}
		built = append(built, x)
	}
	flush()
	return out, nil
}

// forkPoint is what fork cuts at: a reply of a call ({messageId}), a
// loaded history reply ({kind: "reply", text, tools}), or a reply of a
// loaded recording ({kind: "recordedReply", position, containing}).
type forkPoint struct {
	Kind       string        `json:"kind"`
	Text       string        `json:"text"`
	Tools      []toolUseSpec `json:"tools"`
	MessageID  string        `json:"messageId"`
	Position   int           `json:"position"`
	Containing string        `json:"containing"`
}

func (p forkPoint) point() (fixture.ForkPoint, error) {
	switch p.Kind {
	case "":
		if p.MessageID == "" {
			return nil, fmt.Errorf("at: give a reply of a call ({messageId}), a history reply item, or a recordedReply")
		}
		return fixture.Reply{MessageID: p.MessageID, Text: p.Text}, nil
	case "recordedReply":
		return fixture.RecordedReply{Position: p.Position, Containing: p.Containing}, nil
	}
	return inputSpec{Kind: p.Kind, Text: p.Text, Tools: p.Tools}.item()
}

// rubricSpec is judge.Rubric.
type rubricSpec struct {
	Pass []string `json:"pass"`
	Fail []string `json:"fail"`
}

func (r *rubricSpec) rubric() judge.Rubric { return judge.Rubric{Pass: r.Pass, Fail: r.Fail} }
