package proxy

import (
	"sort"

	"github.com/agentvcr/agentvcr/proxy/ca"
)

// DefaultAllow are the origins an agent like getsentry/junior talks to:
// the model gateway, the model providers and Slack.
func DefaultAllow() []string {
	return []string{
		"https://ai-gateway.vercel.sh",
		"https://api.anthropic.com",
		"https://api.openai.com",
		"https://slack.com",
	}
}

// DefaultRules record the model gateway (keyed also on the headers that
// name the model), the providers, and Slack's Web API; and web fetches,
// which are GETs anywhere.
func DefaultRules() []Rule {
	return []Rule{
		{Name: "model", Method: "POST", URLPrefix: "https://ai-gateway.vercel.sh/",
			KeyHeaders: []string{"ai-language-model-id", "ai-language-model-streaming", "ai-model-id"}},
		{Name: "anthropic", Method: "POST", URLPrefix: "https://api.anthropic.com/"},
		{Name: "openai", Method: "POST", URLPrefix: "https://api.openai.com/"},
		{Name: "slack", URLPrefix: "https://slack.com/api/"},
		{Name: "web", Method: "GET"},
	}
}

// Env returns the environment a child process needs to send its traffic
// through the proxy at proxyURL and trust its CA, and nothing else:
// Node (NODE_USE_ENV_PROXY, NODE_EXTRA_CA_CERTS), Go and OpenSSL
// (SSL_CERT_FILE: the system's roots plus the CA), Python requests and
// curl. Loopback is not proxied.
//
// NO_PROXY keeps loopback off the proxy, so that the agent's own routes
// and its local database are reached directly; an agent whose upstream is
// on loopback (a local model server) needs proxyLoopback, which leaves
// NO_PROXY empty.
func Env(proxyURL string, a *ca.Authority, proxyLoopback bool) (map[string]string, error) {
	bundle, err := a.WriteBundle()
	if err != nil {
		return nil, err
	}
	noProxy := "localhost,127.0.0.1,::1"
	if proxyLoopback {
		noProxy = ""
	}
	return map[string]string{
		"HTTP_PROXY":          proxyURL,
		"HTTPS_PROXY":         proxyURL,
		"NO_PROXY":            noProxy,
		"NODE_USE_ENV_PROXY":  "1",
		"NODE_EXTRA_CA_CERTS": a.CertPath,
		"SSL_CERT_FILE":       bundle,
		"REQUESTS_CA_BUNDLE":  bundle,
		"CURL_CA_BUNDLE":      bundle,
	}, nil
}

// EnvNames returns the names Env sets, sorted.
func EnvNames(env map[string]string) []string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
