package proxy

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

// NodePreloadFile names the script, beside the CA's certificate, that Env
// has every Node process load (NODE_OPTIONS=--require): on a Node that
// ignores HTTPS_PROXY it sends fetch through the proxy, and on any Node it
// warns on stderr about a connection that goes around the proxy.
const NodePreloadFile = "node-proxy.cjs"

//go:embed node-proxy.cjs
var nodePreload []byte

// loopbackHosts are the names NO_PROXY keeps off the proxy, so that an
// agent reaches its own routes and services on this machine directly,
// unless an allowed origin is on loopback: then none of them.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// Env returns the environment a child process needs to send its HTTP(S)
// traffic through the proxy at proxyURL and to trust its CA, and nothing
// else. allow is the proxy's allow list.
//
//   - HTTP_PROXY, HTTPS_PROXY and NO_PROXY, and the same in lower case,
//     which curl, Python and undici read first: a stale lower-case
//     variable in the caller's shell would otherwise win.
//   - NO_PROXY keeps loopback (localhost, 127.0.0.1, ::1) off the proxy,
//     unless allow names an origin on loopback (a test's TLS server, a
//     local model server): then NO_PROXY is empty. Such an origin must
//     reach the proxy under every name it has, or an agent that names it
//     another way (localhost for 127.0.0.1) talks to it directly,
//     unrecorded. The agent's other services on this machine then go to
//     the proxy too (and are refused unless allowed).
//   - Node: NODE_USE_ENV_PROXY=1, which Node 22.21+ and 24+ honour;
//     NODE_OPTIONS loads NodePreloadFile, written beside the CA, which
//     routes fetch on older Node and warns about any connection that goes
//     around the proxy; NODE_EXTRA_CA_CERTS.
//   - Go and OpenSSL (curl, Python): SSL_CERT_FILE, REQUESTS_CA_BUNDLE and
//     CURL_CA_BUNDLE name a bundle of the system's roots plus the CA.
func Env(proxyURL string, a *ca.Authority, allow []string) (map[string]string, error) {
	bundle, err := a.WriteBundle()
	if err != nil {
		return nil, err
	}
	preload, err := writeNodePreload(filepath.Dir(a.CertPath))
	if err != nil {
		return nil, err
	}
	noProxy := loopbackHosts
	if len(loopbackOrigins(allow)) > 0 {
		noProxy = nil
	}
	env := map[string]string{
		"NODE_USE_ENV_PROXY":  "1",
		"NODE_OPTIONS":        "--require " + nodeOptionQuote(preload),
		"NODE_EXTRA_CA_CERTS": a.CertPath,
		"SSL_CERT_FILE":       bundle,
		"REQUESTS_CA_BUNDLE":  bundle,
		"CURL_CA_BUNDLE":      bundle,
	}
	for name, value := range map[string]string{"HTTP_PROXY": proxyURL, "HTTPS_PROXY": proxyURL, "NO_PROXY": strings.Join(noProxy, ",")} {
		env[name] = value
		env[strings.ToLower(name)] = value
	}
	return env, nil
}

// EnvCaveats returns what the environment Env hands out for allow cannot
// do, one sentence each, for a person to read before the agent runs: an
// origin on loopback is reached around the proxy by Go's net/http
// whatever the environment says, and NO_PROXY then keeps nothing on
// loopback off the proxy. It returns an empty list, never nil, when there
// is nothing to say.
func EnvCaveats(allow []string) []string {
	caveats := []string{}
	if loopback := loopbackOrigins(allow); len(loopback) > 0 {
		list := strings.Join(loopback, ", ")
		caveats = append(caveats,
			"Go's net/http never sends localhost or a loopback address through a proxy (ProxyFromEnvironment): a Go agent reaches "+list+
				" directly, unrecorded, unless its transport's Proxy is set (docs/proxy.md, \"Put an agent behind it\")",
			"NO_PROXY is empty, so that no other name for "+list+" (localhost, 127.0.0.1, ::1) goes around the proxy: "+
				"the agent's other services on this machine go to the proxy too, which refuses them unless allowed")
	}
	return caveats
}

// loopbackOrigins returns the origins in allow on loopback.
func loopbackOrigins(allow []string) []string {
	var loopback []string
	for _, origin := range allow {
		if u, err := url.Parse(origin); err == nil && isLoopbackHost(u.Hostname()) {
			loopback = append(loopback, origin)
		}
	}
	return loopback
}

// isLoopbackHost reports whether host names this machine only.
func isLoopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

// writeNodePreload writes NodePreloadFile into dir, unless it is there
// already as it should be, and returns its path.
func writeNodePreload(dir string) (string, error) {
	path := filepath.Join(dir, NodePreloadFile)
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, nodePreload) {
		return path, nil
	}
	if err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(nodePreload)
		return err
	}); err != nil {
		return "", fmt.Errorf("proxy: write the Node preload: %w", err)
	}
	return path, nil
}

// nodeOptionQuote quotes s as one argument in NODE_OPTIONS, which Node
// splits on spaces outside double quotes and unescapes a backslash in.
func nodeOptionQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
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
