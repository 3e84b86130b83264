package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/export"
	"github.com/agentvcr/agentvcr/history"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/cliflags"
	"github.com/agentvcr/agentvcr/sanitize"
)

type exportFlags struct {
	db             dbFlags
	conversation   string
	output         string
	idsFile        string
	since, until   string
	all            bool
	surface        string
	limit          int
	outDir         string
	withIdentities bool
	json           bool
	sanitize       bool
	sanitizer      cliflags.Sanitize
	people         string
}

func newExportCmd(e *env) *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export conversations from PostgreSQL as recorded-history JSON",
		Long: `export reads conversations from the product's database, in a read-only
transaction, and writes them as recorded-history JSON: one conversation to
stdout or -o FILE, or many, each to its own file in --out-dir. Rows of the
types a fork never copies (credentials, approvals, plugin state) are dropped.

An export holds personal data: files are written with mode 0600. Sanitize
before anything goes into git, or export with --sanitize: each conversation
is then sanitized in memory, with its identities, and checked before it is
written (mode 0644), so raw personal data never touches the disk. A
conversation the sanitizer refuses is not written at all. With --sanitize the
sanitizer first learns every person of the database (all identities and
users), so that someone named in a conversation they took no part in is
found too.

--people FILE writes that dictionary of every person to FILE (mode 0600), for
sanitize --people on files exported earlier. It is personal data for your
machine only: keep it in your config dir, never in a repository (sanitize
check refuses it there).`,
		Example: `  # one conversation, to stdout
  recorder export --database-url "$PROD_RO_URL" --conversation slack:C0123:1790000000.000100

  # with the identities its rows reference, to a file
  recorder export --conversation local:web:4f1c --with-identities -o launch.json

  # every web conversation active in the last week, one file each
  recorder export --since 168h --surface web --out-dir exports/

  # the conversations listed in a file (one id per line, # comments)
  recorder export --ids-file ids.txt --out-dir exports/ --json

  # sanitized in memory, so raw personal data never touches the disk
  recorder export --conversation slack:C0123:1790000000.000100 --sanitize --key-file ~/.config/agentvcr/sanitize.key -o recordings/deploy.json

  # every person of the database, for sanitize --people
  recorder export --people ~/.config/agentvcr/people.json`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd, e) },
	}
	f.db.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.conversation, "conversation", "", "export the conversation with this id")
	fl.StringVarP(&f.output, "output", "o", "", "with --conversation: write to this file instead of stdout")
	fl.StringVar(&f.idsFile, "ids-file", "", "export the conversations listed in this file, one id per line")
	fl.StringVar(&f.since, "since", "", "export conversations active since this time (RFC 3339, YYYY-MM-DD, or a duration ago such as 72h)")
	fl.StringVar(&f.until, "until", "", "with --since or --all: only conversations active before this time")
	fl.BoolVar(&f.all, "all", false, "export every conversation")
	fl.StringVar(&f.surface, "surface", "", "with --since or --all: only conversations delivered to slack or web")
	fl.IntVar(&f.limit, "limit", 0, "with --since or --all: at most this many conversations (0: no cap)")
	fl.StringVar(&f.outDir, "out-dir", "", "directory for the files of a bulk export")
	fl.BoolVar(&f.withIdentities, "with-identities", false, "add the identity rows the conversation references")
	fl.BoolVar(&f.json, "json", false, "bulk export: print one JSON object per conversation instead of file names")
	fl.BoolVar(&f.sanitize, "sanitize", false, "sanitize each conversation in memory before writing it (implies --with-identities)")
	fl.StringVar(&f.people, "people", "", "write every person of the database to this file (mode 0600), for sanitize --people")
	f.sanitizer.Register(fl)
	return cmd
}

func (f *exportFlags) run(cmd *cobra.Command, e *env) error {
	selections := 0
	for _, set := range []bool{f.conversation != "", f.idsFile != "", f.since != "", f.all} {
		if set {
			selections++
		}
	}
	switch {
	case selections == 0 && f.people != "":
	case selections != 1:
		return cli.Usagef("say what to export with exactly one of --conversation, --ids-file, --since or --all (or --people alone)")
	case f.conversation != "" && f.outDir != "":
		return cli.Usagef("--out-dir is for bulk exports; use -o FILE with --conversation")
	case f.conversation == "" && f.output != "":
		return cli.Usagef("-o is for --conversation; a bulk export writes to --out-dir")
	case f.conversation == "" && f.outDir == "" && selections > 0:
		return cli.Usagef("a bulk export needs --out-dir")
	case (f.idsFile != "" || f.conversation != "" || selections == 0) && (f.until != "" || f.surface != "" || f.limit != 0):
		return cli.Usagef("--until, --surface and --limit filter --since or --all, not --conversation or --ids-file")
	case f.limit < 0:
		return cli.Usagef("--limit %d: give a positive number of conversations, or leave it out for all", f.limit)
	}
	filter := export.Filter{Limit: f.limit}
	var err error
	if f.since != "" {
		if filter.Since, err = parseTime(f.since); err != nil {
			return cli.Usagef("--since: %v", err)
		}
	}
	if f.until != "" {
		if filter.Until, err = parseTime(f.until); err != nil {
			return cli.Usagef("--until: %v", err)
		}
	}
	if f.surface != "" {
		if filter.Surface, err = history.ParseSurface(f.surface); err != nil {
			return cli.Usagef("--surface: %v", err)
		}
	}
	var ids []string
	if f.idsFile != "" {
		if ids, err = readIDs(f.idsFile); err != nil {
			return cli.Usagef("--ids-file: %v", err)
		}
	}
	if !f.sanitize && (f.sanitizer != cliflags.Sanitize{}) {
		return cli.Usagef("--key-file, --rules, --names and --force go with --sanitize")
	}
	p, err := f.db.lookupProfile()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	conn, err := f.db.connect(ctx, e)
	if err != nil {
		return interrupted(ctx, err, "nothing written")
	}
	defer conn.Close(ctx)
	ex := &export.Exporter{DB: conn, Profile: p, WithIdentities: f.withIdentities}
	if f.people != "" {
		n, err := writePeople(ctx, ex, p.Name, f.people)
		if err != nil {
			return interrupted(ctx, err, "nothing written")
		}
		fmt.Fprintf(e.stderr, "recorder: wrote %d people to %s (personal data: keep it out of git)\n", n, f.people)
		if selections == 0 {
			return nil
		}
	}
	if f.sanitize {
		if err := f.addSanitizer(ctx, ex, e); err != nil {
			return interrupted(ctx, err, "nothing written")
		}
	}

	if f.conversation != "" {
		if f.output == "" {
			_, err := ex.Export(ctx, f.conversation, e.stdout)
			return interrupted(ctx, err, "the output is incomplete")
		}
		mode := os.FileMode(0o600)
		if f.sanitize {
			mode = 0o644
		}
		return interrupted(ctx, atomicfile.Write(f.output, mode, func(w io.Writer) error {
			_, err := ex.Export(ctx, f.conversation, w)
			return err
		}), "nothing written")
	}
	if ids == nil {
		if ids, err = ex.Select(ctx, filter); err != nil {
			return interrupted(ctx, err, "nothing written")
		}
		if len(ids) == 0 {
			fmt.Fprintf(e.stderr, "recorder: no conversation matches %s; nothing written\n", f.describe())
			return nil
		}
	}
	if err := os.MkdirAll(f.outDir, 0o700); err != nil {
		return err
	}
	failed := 0
	results, err := ex.ToDir(ctx, ids, f.outDir, f.progress(ctx, e, &failed))
	if cli.IsTerminal(e.stderr) {
		fmt.Fprintln(e.stderr)
	}
	if err == nil {
		return nil
	}
	written := fmt.Sprintf("%d of %d conversations written to %s", len(results), len(ids), f.outDir)
	if ctx.Err() != nil {
		return fmt.Errorf("%w; %s, the one in progress not", cli.ErrInterrupted, written)
	}
	// Each failure is on stderr already, as it happened.
	if failed < len(ids)-len(results) {
		return fmt.Errorf("%s; stopped at the error above", written)
	}
	return fmt.Errorf("%s; %d failed (above)", written, failed)
}

// describe says what a bulk export's flags select, for a message.
func (f *exportFlags) describe() string {
	var parts []string
	for _, fl := range []struct{ name, value string }{{"--since", f.since}, {"--until", f.until}, {"--surface", f.surface}} {
		if fl.value != "" {
			parts = append(parts, fl.name+" "+fl.value)
		}
	}
	if len(parts) == 0 {
		return "--all (the database has no conversations)"
	}
	return strings.Join(parts, " ")
}

// interrupted reports err as an interruption, saying what was left undone,
// when ctx was cancelled: the error then is a consequence, such as a closed
// connection, that would only mislead.
func interrupted(ctx context.Context, err error, undone string) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w; %s", cli.ErrInterrupted, undone)
	}
	return err
}

// writePeople writes every person of the database to a people file.
func writePeople(ctx context.Context, ex *export.Exporter, profile, name string) (int, error) {
	ids, users, err := ex.People(ctx)
	if err != nil {
		return 0, err
	}
	p := &sanitize.People{Kind: sanitize.PeopleKind, Version: 1, Profile: profile, Identities: ids, Users: users}
	return len(ids) + len(users), atomicfile.Write(name, 0o600, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	})
}

// addSanitizer makes the exporter sanitize each document before writing
// it, having learned every person of the database.
func (f *exportFlags) addSanitizer(ctx context.Context, ex *export.Exporter, e *env) error {
	opts, err := f.sanitizer.Options(e.getenv)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	ids, users, err := ex.People(ctx)
	if err != nil {
		return err
	}
	opts.People = &sanitize.People{Kind: sanitize.PeopleKind, Version: 1, Identities: ids, Users: users}
	s, err := sanitize.New(opts)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	if s.RandomKey() {
		fmt.Fprintf(e.stderr, "recorder: no sanitizer key (--key-file or $%s): using a random key; fakes agree within this run only\n", cliflags.KeyEnv)
	}
	ex.WithIdentities = true
	ex.FileMode = 0o644
	ex.Transform = func(doc []byte, id string) ([]byte, error) { return s.Sanitize(doc, id) }
	return nil
}

// progress prints each finished conversation: its file (or a JSON object)
// on stdout, a counter on stderr when stderr is a terminal, and failures on
// stderr.
func (f *exportFlags) progress(ctx context.Context, e *env, failed *int) export.Progress {
	tty := cli.IsTerminal(e.stderr)
	enc := json.NewEncoder(e.stdout)
	return func(done, total int, id string, res *export.Result, err error) {
		if tty {
			fmt.Fprintf(e.stderr, "\rexported %d/%d", done, total)
		}
		if err != nil && ctx.Err() != nil {
			return // an interruption, said once at the end
		}
		if err != nil {
			*failed++
			if tty {
				fmt.Fprintln(e.stderr)
			}
			fmt.Fprintf(e.stderr, "recorder: %v\n", err)
			return
		}
		if f.json {
			enc.Encode(res)
			return
		}
		fmt.Fprintln(e.stdout, res.File)
	}
}

// parseTime reads an RFC 3339 time, a date, or a duration before now.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(s, "d")); err == nil && strings.HasSuffix(s, "d") && n > 0 {
		return time.Now().AddDate(0, 0, -n), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use RFC 3339 (2026-11-01T00:00:00Z), a date (2026-11-01) or a duration ago (72h, 7d)", s)
}

// readIDs reads conversation ids, one per line; blank lines and lines
// starting with # are skipped.
func readIDs(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") && !seen[line] {
			seen[line] = true // an id listed twice is exported once
			ids = append(ids, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s lists no conversation ids", name)
	}
	return ids, nil
}
