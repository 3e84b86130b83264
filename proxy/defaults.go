package proxy

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
