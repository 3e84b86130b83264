package proxy

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is the proxy's configuration file, YAML or JSON:
//
//	allow: [https://ai-gateway.vercel.sh, https://slack.com]
//	passthroughUnlisted: false
//	rules:
//	  - name: model
//	    method: POST
//	    url: https://ai-gateway.vercel.sh/
//	    keyHeaders: [ai-language-model-id]
//	    mode: auto
//
// Its allow list and rules replace the defaults.
type Config struct {
	Allow               []string `yaml:"allow"`
	PassthroughUnlisted bool     `yaml:"passthroughUnlisted"`
	Rules               []Rule   `yaml:"rules"`
}

// LoadConfig reads a configuration file. Unknown keys, unnamed or
// duplicate rules and unknown modes are errors that name the file.
func LoadConfig(name string) (*Config, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("proxy config %s: %w", name, err)
	}
	for i, o := range c.Allow {
		if _, err := ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("proxy config %s: allow[%d]: %w", name, i, err)
		}
	}
	seen := map[string]bool{}
	for i, r := range c.Rules {
		if r.Name == "" {
			return nil, fmt.Errorf("proxy config %s: rules[%d] has no name", name, i)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("proxy config %s: rules[%d]: a second rule named %q", name, i, r.Name)
		}
		seen[r.Name] = true
		if r.Mode != "" {
			if _, err := ParseMode(string(r.Mode)); err != nil {
				return nil, fmt.Errorf("proxy config %s: rules[%d]: %w", name, i, err)
			}
		}
	}
	return &c, nil
}

// ParseOrigin checks an origin for the allow list, scheme://host[:port]
// with the scheme http or https and nothing after the host, and returns
// it in lower case.
func ParseOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	switch {
	case err != nil:
		return "", fmt.Errorf("origin %q: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("origin %q: want http://host[:port] or https://host[:port]", s)
	case u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return "", fmt.Errorf("origin %q: want scheme://host[:port], with no path, query or user", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}
