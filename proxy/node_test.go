package proxy

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fetchScript fetches a URL with Node's fetch through undici's
// EnvHttpProxyAgent, which reads HTTPS_PROXY; Node trusts the proxy's CA
// through NODE_EXTRA_CA_CERTS.
const fetchScript = `
const { EnvHttpProxyAgent, setGlobalDispatcher } = require('undici');
setGlobalDispatcher(new EnvHttpProxyAgent());
fetch(process.argv[2]).then(async (r) => {
  console.log(r.headers.get('x-agentvcr') + ' ' + (await r.text()));
}).catch((e) => { console.error(e); process.exit(1); });
`

func TestNodeFetch(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: apt-get install nodejs npm (.ci/run does)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is not installed: apt-get install npm (.ci/run does)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "undici@6").CombinedOutput(); err != nil {
		t.Fatalf("cannot install undici from the npm registry: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "fetch.js")
	os.WriteFile(script, []byte(fetchScript), 0o644)

	var hits atomic.Int64
	up := providers(&hits)
	defer up.Close()
	p, client := front(t, up, ModeAuto, t.TempDir(), Rule{Name: "all", URLPrefix: up.URL + "/"})
	proxyURL, _ := client.Transport.(*http.Transport).Proxy(&http.Request{URL: mustParse(up.URL)})
	fetch := func() string {
		cmd := exec.CommandContext(ctx, node, script, up.URL+"/hello")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HTTPS_PROXY="+proxyURL.String(), "NO_PROXY=", "NODE_EXTRA_CA_CERTS="+p.CA.CertPath)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	if got := fetch(); got != "recorded hello from upstream" {
		t.Fatalf("node live: %q", got)
	}
	up.Close()
	if got := fetch(); got != "replayed hello from upstream" {
		t.Fatalf("node replay: %q", got)
	}
}
