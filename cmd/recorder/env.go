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
		proxyLoopback   bool
	)
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the environment a process needs to go through the proxy",
		Long: `env prints shell export lines that send a child process's HTTP(S) traffic
through the recording proxy and make it trust the proxy's CA, and nothing
else: the CA is trusted in that process only, never system-wide.

NO_PROXY keeps loopback (localhost, 127.0.0.1, ::1) off the proxy, so the
agent reaches its own routes and its local database directly. An agent whose
upstream is on loopback (a local model server, a test's TLS server) needs
--proxy-loopback, which sends loopback through the proxy too.`,
		Example: `  eval "$(recorder env)" && npm test
  recorder env --proxy http://127.0.0.1:9000
  eval "$(recorder env --proxy-loopback)" && go test ./...`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if u, err := url.Parse(proxyURL); err != nil || u.Scheme != "http" || u.Host == "" || u.Path != "" && u.Path != "/" {
				return cli.Usagef("--proxy %q: want the proxy's URL, http://host:port, as recorder proxy prints it", proxyURL)
			}
			a, err := ca.Open(caDir)
			if err != nil {
				return err
			}
			environ, err := proxy.Env(proxyURL, a, proxyLoopback)
			if err != nil {
				return err
			}
			for _, name := range proxy.EnvNames(environ) {
				fmt.Fprintf(e.stdout, "export %s='%s'\n", name, strings.ReplaceAll(environ[name], "'", `'\''`))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&proxyURL, "proxy", "http://127.0.0.1:8899", "URL of the running proxy")
	cmd.Flags().StringVar(&caDir, "ca-dir", "", "directory of the CA (default $XDG_CONFIG_HOME/agentvcr)")
	cmd.Flags().BoolVar(&proxyLoopback, "proxy-loopback", false, "send loopback traffic through the proxy too (empty NO_PROXY), for upstreams on localhost")
	return cmd
}
