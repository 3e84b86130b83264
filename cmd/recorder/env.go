package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

func newEnvCmd(e *env) *cobra.Command {
	var proxyURL, caDir string
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Print the environment a process needs to go through the proxy",
		Long: `env prints shell export lines that send a child process's HTTP(S) traffic
through the recording proxy and make it trust the proxy's CA, and nothing
else: the CA is trusted in that process only, never system-wide.`,
		Example: `  eval "$(recorder env)" && npm test
  recorder env --proxy http://127.0.0.1:9000`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := ca.Open(caDir)
			if err != nil {
				return err
			}
			environ, err := proxy.Env(proxyURL, a)
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
	return cmd
}
