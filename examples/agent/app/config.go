package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"
)

// The agent's name and model unless AGENT_BOT_NAME and AGENT_MODEL say
// otherwise: what its replies and model rows carry.
const (
	DefaultBotName    = "junior-example"
	DefaultAgentModel = "anthropic/claude-sonnet-4.5"
)

// Config is the agent's configuration, read from the environment as a
// product reads it.
type Config struct {
	DatabaseURL        string // DATABASE_URL (required)
	SlackSigningSecret string // SLACK_SIGNING_SECRET (required)
	SlackBotToken      string // SLACK_BOT_TOKEN (required)
	GatewayAPIKey      string // AI_GATEWAY_API_KEY (required)
	SchedulerSecret    string // AGENT_SCHEDULER_SECRET (required): the bearer of the heartbeat
	// AdminSecret (AGENT_ADMIN_SECRET) is the bearer of the routes a test
	// drives the agent with (idle, queue, conversations, automations, and
	// reading any conversation); unset, they are off.
	AdminSecret string
	Addr        string // AGENT_ADDR, default 127.0.0.1:3000

	GatewayURL string // AI_GATEWAY_URL, default https://ai-gateway.vercel.sh
	SlackAPI   string // SLACK_API_URL, default https://slack.com/api/
	GitHubAPI  string // GITHUB_API_URL, default https://api.github.com
	AgentModel string // AGENT_MODEL, default anthropic/claude-sonnet-4.5
	FastModel  string // AGENT_FAST_MODEL, default anthropic/claude-haiku-4.5
	BotName    string // AGENT_BOT_NAME, default junior-example
	PublicURL  string // AGENT_PUBLIC_URL, for OAuth links; default http://<Addr>

	ContextWindowTokens int           // AGENT_CONTEXT_WINDOW_TOKENS, default 200000
	ToolCallLimit       int           // AGENT_TOOL_CALL_LIMIT, default 20
	TurnTimeout         time.Duration // AGENT_TURN_TIMEOUT, default 10m
	TurnSlice           time.Duration // AGENT_TURN_SLICE, default 4m: a turn past it pauses and is re-queued

	// MemoryExtraction (AGENT_MEMORY_EXTRACTION=on; default off) runs the
	// memory plugin's extraction after each completed turn: a model call
	// on the fast model that writes memories. Off, a scripted test meets
	// no prompt it did not script.
	MemoryExtraction bool

	// Proxy and CACertFile come from HTTPS_PROXY and SSL_CERT_FILE; they
	// are read here, not by net/http, which reads its environment once
	// per process.
	Proxy      string
	CACertFile string

	// GitHubWebhookSecret (GITHUB_WEBHOOK_SECRET) is the secret GitHub
	// signs the agent's webhooks with; unset, POST /api/webhooks/github
	// is off (an agent without GitHub needs none, and no unsigned
	// webhook is ever taken). EventSecret (AGENT_EVENT_SECRET) is the
	// bearer of POST /api/events, other sources' events; unset, it is off.
	GitHubWebhookSecret, EventSecret string
	// AutomatedTurnLimit (AGENT_AUTOMATED_TURN_LIMIT, default 5) is how
	// many automated turns (automations, events, watch notifications) a
	// conversation runs without a person's message in between; past it
	// they are refused, so an agent whose actions raise the events it
	// watches stops.
	AutomatedTurnLimit int
}

// FromEnv reads a Config with getenv (os.Getenv in main). It fails with
// every variable that is missing or wrong, named.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL: getenv("DATABASE_URL"), SlackSigningSecret: getenv("SLACK_SIGNING_SECRET"),
		SlackBotToken: getenv("SLACK_BOT_TOKEN"), GatewayAPIKey: getenv("AI_GATEWAY_API_KEY"),
		SchedulerSecret: getenv("AGENT_SCHEDULER_SECRET"),
		AdminSecret:     getenv("AGENT_ADMIN_SECRET"),
		Addr:            or(getenv("AGENT_ADDR"), "127.0.0.1:3000"),
		GatewayURL:      or(getenv("AI_GATEWAY_URL"), "https://ai-gateway.vercel.sh"),
		SlackAPI:        or(getenv("SLACK_API_URL"), "https://slack.com/api/"),
		GitHubAPI:       or(getenv("GITHUB_API_URL"), "https://api.github.com"),
		AgentModel:      or(getenv("AGENT_MODEL"), DefaultAgentModel),
		FastModel:       or(getenv("AGENT_FAST_MODEL"), "anthropic/claude-haiku-4.5"),
		BotName:         or(getenv("AGENT_BOT_NAME"), DefaultBotName),
		PublicURL:       getenv("AGENT_PUBLIC_URL"),
		Proxy:           or(getenv("HTTPS_PROXY"), getenv("https_proxy")),
		CACertFile:      getenv("SSL_CERT_FILE"),
	}
	var errs []error
	for _, v := range [][2]string{{"DATABASE_URL", c.DatabaseURL}, {"SLACK_SIGNING_SECRET", c.SlackSigningSecret},
		{"SLACK_BOT_TOKEN", c.SlackBotToken}, {"AI_GATEWAY_API_KEY", c.GatewayAPIKey}, {"AGENT_SCHEDULER_SECRET", c.SchedulerSecret}} {
		if v[1] == "" {
			errs = append(errs, fmt.Errorf("%s is not set", v[0]))
		}
	}
	num := func(name string, def int) int {
		s := getenv(name)
		if s == "" {
			return def
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive whole number", name, s))
		}
		return n
	}
	dur := func(name string, def time.Duration) time.Duration {
		s := getenv(name)
		if s == "" {
			return def
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive duration such as 90s or 4m", name, s))
		}
		return d
	}
	c.ContextWindowTokens = num("AGENT_CONTEXT_WINDOW_TOKENS", 200000)
	c.ToolCallLimit = num("AGENT_TOOL_CALL_LIMIT", 20)
	c.TurnTimeout = dur("AGENT_TURN_TIMEOUT", 10*time.Minute)
	c.TurnSlice = dur("AGENT_TURN_SLICE", 4*time.Minute)
	switch v := getenv("AGENT_MEMORY_EXTRACTION"); v {
	case "on":
		c.MemoryExtraction = true
	case "", "off":
	default:
		errs = append(errs, fmt.Errorf("AGENT_MEMORY_EXTRACTION=%q: want on or off", v))
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	if c.AdminSecret != "" && c.AdminSecret == c.SchedulerSecret {
		errs = append(errs, errors.New("AGENT_ADMIN_SECRET must differ from AGENT_SCHEDULER_SECRET: the heartbeat's caller must not read every conversation"))
	}
	if c.Proxy != "" {
		if u, err := url.Parse(c.Proxy); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("HTTPS_PROXY=%q is not a URL", c.Proxy))
		}
	}
	c.GitHubWebhookSecret, c.EventSecret = getenv("GITHUB_WEBHOOK_SECRET"), getenv("AGENT_EVENT_SECRET")
	c.AutomatedTurnLimit = num("AGENT_AUTOMATED_TURN_LIMIT", 5)
	if c.EventSecret != "" && (c.EventSecret == c.AdminSecret || c.EventSecret == c.SchedulerSecret) {
		errs = append(errs, errors.New("AGENT_EVENT_SECRET must differ from AGENT_ADMIN_SECRET and AGENT_SCHEDULER_SECRET: an event source must not read conversations or run the heartbeat"))
	}
	return c, errors.Join(errs...)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// httpClient is the agent's outbound client: through HTTPS_PROXY when
// set, trusting the system roots plus SSL_CERT_FILE.
func (c Config) httpClient() (*http.Client, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	if c.Proxy != "" {
		u, err := url.Parse(c.Proxy)
		if err != nil {
			return nil, err
		}
		t.Proxy = http.ProxyURL(u)
	}
	if c.CACertFile != "" {
		pem, err := os.ReadFile(c.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("SSL_CERT_FILE: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("SSL_CERT_FILE %s holds no PEM certificate", c.CACertFile)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: roots}
	}
	return &http.Client{Transport: t}, nil
}
