// Package cliflags holds the command-line flags that more than one of
// agentvcr's commands take, and turns them into library options.
package cliflags

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentvcr/agentvcr/sanitize"
)

// KeyEnv names the environment variable that holds the sanitizer key when
// no key file is given.
const KeyEnv = "AGENTVCR_SANITIZE_KEY"

// Sanitize are the flags that configure the sanitizer.
type Sanitize struct {
	KeyFile   string
	RulesFile string
	NamesFile string
	Force     bool
	// NoDetectNames turns the free-text name detector off.
	NoDetectNames bool
}

// Register adds the flags to fs.
func (f *Sanitize) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.KeyFile, "key-file", "", "file holding the sanitizer key (default $"+KeyEnv+"; without either, a random key)")
	fs.StringVar(&f.RulesFile, "rules", "", "more rules (JSON) on top of the junior profile's")
	fs.StringVar(&f.NamesFile, "names", "", "file of names to hunt in free text, one per line")
	fs.BoolVar(&f.Force, "force", false, "sanitize files that carry a sanitizer stamp already")
	fs.BoolVar(&f.NoDetectNames, "no-detect-names", false, "do not look for people's names in free text (only names from known fields, --people and --names)")
}

// Options reads the key, rules and names the flags name. The key is the
// key file's content or the environment variable's value, with surrounding
// white space removed.
func (f *Sanitize) Options(getenv func(string) string) (sanitize.Options, error) {
	opts := sanitize.Options{Force: f.Force, NoDetectNames: f.NoDetectNames}
	switch {
	case f.KeyFile != "":
		b, err := os.ReadFile(f.KeyFile)
		if err != nil {
			return opts, fmt.Errorf("--key-file: %w", err)
		}
		opts.Key = []byte(strings.TrimSpace(string(b)))
		if len(opts.Key) == 0 {
			return opts, fmt.Errorf("--key-file %s is empty", f.KeyFile)
		}
	case getenv(KeyEnv) != "":
		opts.Key = []byte(strings.TrimSpace(getenv(KeyEnv)))
	}
	if opts.Key != nil && len(opts.Key) < sanitize.MinKeyLen {
		return opts, fmt.Errorf("the sanitizer key has %d bytes: use at least %d (e.g. openssl rand -hex 32)", len(opts.Key), sanitize.MinKeyLen)
	}
	opts.Rules = sanitize.DefaultRules()
	if f.RulesFile != "" {
		file, err := os.Open(f.RulesFile)
		if err != nil {
			return opts, fmt.Errorf("--rules: %w", err)
		}
		defer file.Close()
		more, err := sanitize.ParseRules(file, f.RulesFile)
		if err != nil {
			return opts, err
		}
		opts.Rules.Merge(more)
	}
	if f.NamesFile != "" {
		file, err := os.Open(f.NamesFile)
		if err != nil {
			return opts, fmt.Errorf("--names: %w", err)
		}
		defer file.Close()
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			if name := strings.TrimSpace(sc.Text()); name != "" && !strings.HasPrefix(name, "#") {
				opts.Names = append(opts.Names, name)
			}
		}
		if err := sc.Err(); err != nil {
			return opts, fmt.Errorf("--names: %w", err)
		}
	}
	return opts, nil
}
