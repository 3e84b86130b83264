package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/proxy/ca"
)

func newCACmd(e *env) *cobra.Command {
	var (
		dir   string
		asPEM bool
	)
	cmd := &cobra.Command{
		Use:   "ca",
		Short: "Print the path of the proxy's certificate authority, making it on first use",
		Long: `ca prints the path of the root certificate the recording proxy signs its
certificates with, and makes the CA on first use: an ECDSA P-256 key in your
config dir ($XDG_CONFIG_HOME/agentvcr, key mode 0600). Trust it only in the
process under test (NODE_EXTRA_CA_CERTS, SSL_CERT_FILE), never system-wide.`,
		Example: `  recorder ca
  NODE_EXTRA_CA_CERTS=$(recorder ca) node agent.js
  recorder ca --pem > /tmp/agentvcr-ca.pem`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := ca.Open(dir)
			if err != nil {
				return err
			}
			if asPEM {
				_, err = e.stdout.Write(a.PEM())
				return err
			}
			_, err = fmt.Fprintln(e.stdout, a.CertPath)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "ca-dir", "", "directory of the CA (default $XDG_CONFIG_HOME/agentvcr)")
	cmd.Flags().BoolVar(&asPEM, "pem", false, "print the certificate itself")
	return cmd
}
