package proxy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nodeModules is where .ci/run installs, from the lockfile beside it,
// the npm packages the Node tests require; a test never installs them.
const nodeModules = "testdata/node/node_modules"

// TestNodeUndiciSnippet runs docs/proxy.md's snippet for a program that sets
// fetch's dispatcher itself (undici's EnvHttpProxyAgent) on the machine's
// Node, with the environment Env hands out, with and without the preload
// it loads: the request reaches the origin through the proxy, never
// around it.
func TestNodeUndiciSnippet(t *testing.T) {
	if _, err := os.Stat(filepath.Join(nodeModules, "undici", "package.json")); err != nil {
		t.Fatalf("undici is not installed: npm ci --prefix proxy/testdata/node (.ci/run does): %v", err)
	}
	script, err := filepath.Abs("testdata/node/fetch-undici.cjs")
	if err != nil {
		t.Fatal(err)
	}
	w := newWitness(t)
	_, env := envProxy(t, w)
	for i, preload := range []bool{true, false} {
		t.Run(fmt.Sprintf("preload %v", preload), func(t *testing.T) {
			env := env
			if !preload {
				env = withVar(env, "NODE_OPTIONS", "")
			}
			path := fmt.Sprintf("/undici/%d", i)
			stdout, stderr, err := runClient(t, env, "node", script, w.url("https", "localhost")+path)
			if err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			if !strings.Contains(stdout, "x-agentvcr: recorded") || !strings.Contains(stdout, "hello "+path) || strings.Contains(stderr, "agentvcr") {
				t.Fatalf("not answered through the proxy:\n%s\nstderr:\n%s", stdout, stderr)
			}
			if got := w.requests(path); len(got) != 1 {
				t.Fatalf("the origin got %d requests for %s; want 1", len(got), path)
			}
			if d := w.direct(); len(d) > 0 {
				t.Fatalf("the agent reached the origin around the proxy, from %v", d)
			}
		})
	}
}
