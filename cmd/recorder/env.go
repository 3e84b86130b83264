package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

func newEnvCmd(e *env) *cobra.Command {
	var (
		proxyURL, caDir string
		allow           []string
	)
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the environment a process needs to go through the proxy",
		Long: `env prints shell export lines that send a child process's HTTP(S) traffic
through the recording proxy and make it trust the proxy's CA, and nothing
else: the CA is trusted in that process only, never system-wide. It prints
what recorder proxy's start line holds as "env".

Node: NODE_USE_ENV_PROXY=1 routes fetch on Node 22.21+ and 24+, and
node:http(s) from 22.21 and 24.5; NODE_OPTIONS loads a script, written beside
the CA, that routes fetch on older Node and warns on stderr about any
connection that goes around the proxy. Your own NODE_OPTIONS is kept after it.

NO_PROXY keeps loopback (localhost, 127.0.0.1, ::1) off the proxy, so the
agent reaches its own routes and its local database directly, unless --allow
names an origin on loopback: pass the loopback origins the proxy allows (a
local model server, a test's TLS server) as you passed them to recorder
proxy, and NO_PROXY is empty, so that the agent reaches them through the
proxy under any name (localhost for 127.0.0.1 too). What the environment
cannot do is printed as comments.`,
		Example: `  eval "$(recorder env)" && npm test
  recorder env --proxy http://127.0.0.1:9000
  eval "$(recorder env --allow https://localhost:48443)" && npm test`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if u, err := url.Parse(proxyURL); err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" && u.Path != "/" {
				return cli.Usagef("--proxy %q: want the proxy's URL, http://host:port, as recorder proxy prints it", proxyURL)
			}
			for _, o := range allow {
				if _, err := proxy.ParseOrigin(o); err != nil {
					return cli.Usagef("--allow: %v", err)
				}
			}
			a, err := ca.Open(caDir)
			if err != nil {
				return err
			}
			environ, err := proxy.Env(proxyURL, a, allow)
			if err != nil {
				return err
			}
			for _, c := range proxy.EnvCaveats(allow) {
				fmt.Fprintf(e.stdout, "# warning: %s\n", c)
			}
			for _, name := range proxy.EnvNames(environ) {
				value := "'" + strings.ReplaceAll(environ[name], "'", `'\''`) + "'"
				if name == "NODE_OPTIONS" {
					value += `"${NODE_OPTIONS:+ $NODE_OPTIONS}"`
				}
				fmt.Fprintf(e.stdout, "export %s=%s\n", name, value)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&proxyURL, "proxy", "http://127.0.0.1:8899", "URL of the running proxy")
	cmd.Flags().StringVar(&caDir, "ca-dir", "", "directory of the CA (default $XDG_CONFIG_HOME/agentvcr)")
	cmd.Flags().StringArrayVar(&allow, "allow", nil, "an origin the proxy allows (as recorder proxy --allow); one on loopback empties NO_PROXY; repeatable")
	return cmd
}
