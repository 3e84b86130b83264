package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentvcr/agentvcr/control"
	"github.com/agentvcr/agentvcr/fakeai"
	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/batchwriter"
	"github.com/agentvcr/agentvcr/internal/cli"
	"github.com/agentvcr/agentvcr/internal/slogbatch"
	"github.com/agentvcr/agentvcr/proxy"
	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/slack"
)

type proxyFlags struct {
	listen, control     string
	mode                string
	dir                 string
	config              string
	allow               []string
	passthroughUnlisted bool
	timing              string
	caDir               string
	usedFile            string
	listenAny           bool
	quiet               bool
	logFormat           string
	fakeModel           bool
	mockSlack           bool
	headerTimeout       time.Duration
	handshakeTimeout    time.Duration
	idleTimeout         time.Duration
	upstreamCAs         []string
	exitOnStdinClose    bool
}

// modelRules names the rules --fake-model answers from the scripted model.
const modelRules = "model, anthropic, openai"

// stopTimeout bounds how long an interrupted proxy lets the exchanges in
// flight finish.
const stopTimeout = 10 * time.Second

func newProxyCmd(e *env) *cobra.Command {
	var f proxyFlags
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Run the recording proxy an agent under test sends its HTTPS traffic through",
		Long: `proxy runs an HTTPS man-in-the-middle proxy for the agent under test: it
records what goes live and replays it on the next run, streams included, and
refuses origins off its allow list. It prints one JSON line when it is ready:

  {"proxy": URL, "control": URL, "token": T, "ca": PATH, "env": {NAME: VALUE},
   "warnings": [TEXT]}

(env is what the agent's process needs: HTTPS_PROXY, NODE_EXTRA_CA_CERTS,
SSL_CERT_FILE and the like, as recorder env prints it; warnings says what
that environment cannot do, such as route a Go agent to an origin on
loopback). On a terminal it also says, on stderr, what it serves, the
warnings, and what to run next. It logs one line per exchange to stderr
(method, url, status, outcome, rule, ms to the response's headers), and
warnings: a replay miss, a response not recorded, replay with nothing
recorded, a refused origin, an upstream that failed (its TLS too: trust a
private CA with --upstream-ca). The exchanges' lines are formatted off the
request's path and written together, within 50 ms of each (a request never
waits for its line); a warning is written at once, with the lines before
it. --quiet keeps the warnings and errors only; --log-format json writes
each line as a JSON object.

A connection that sends nothing closes after --header-timeout (30 s), a
tunnel's TLS handshake after --handshake-timeout (30 s), and a keep-alive
connection after --idle-timeout (2 min) idle.

SIGINT or SIGTERM stops it: it takes no new requests, lets the exchanges in
flight finish for up to 10 s, ends an open test scope as failed (an
interrupted test did not pass: its recordings are not written), writes
what it recorded, says so, and exits 130. With --exit-on-stdin-close the
end of its standard input (or an error reading it) stops it the same way:
a parent that starts it with a pipe as stdin and holds the other end need
not outlive it to stop it, since its end closes however it dies (SIGKILL
too), and the proxy does not run on without it.

Modes (--mode): auto (replay, or go live and record), replay (a miss gets
412 and nothing goes live), record (go live and record again, replacing
what the cassette held of the request), passthrough (go live, write
nothing), mock (Slack answered by the in-process mock; for a rule, "mode:
mock" in --config). The default is auto, or replay when $CI is set. A rule
may also be in mode fake (model requests answered by the scripted model),
as --fake-model puts the model rules.

Many proxies may share one --dir (a proxy per test worker): each merges
what it recorded into the cassettes under a lock file beside each, and
none loses another's recordings.

The control API (loopback, bearer token) opens and ends test scopes,
streams progress events (GET /v1/events?hold=...) and releases holds,
queues faults (POST /v1/faults), and seeds and reads the Slack mock; the
docs/proxy.md lists every call.`,
		Example: `  recorder proxy --dir recordings/cassettes
  recorder proxy --mode replay --allow https://api.example.com --timing realtime
  recorder proxy --config proxy.yaml --listen 127.0.0.1:8899
  recorder proxy --fake-model --mock-slack   # then: curl ... -d '{"agent":..., "responses":[...]}' $CONTROL/v1/fakeai/respond`,
		Args: cli.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Context(), cmd, e) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8899", "address of the proxy")
	fl.StringVar(&f.control, "control", "127.0.0.1:0", "address of the control API (loopback only)")
	fl.StringVar(&f.mode, "mode", "", orList(proxyModes)+" (default auto; replay when $CI is set)")
	fl.StringVar(&f.dir, "dir", "recordings/cassettes", "directory of the cassettes")
	fl.StringVar(&f.config, "config", "", "rules and allow list (YAML or JSON); replaces the defaults")
	fl.StringArrayVar(&f.allow, "allow", nil, "also allow this origin (scheme://host[:port]); repeatable")
	fl.BoolVar(&f.passthroughUnlisted, "passthrough-unlisted", false, "tunnel origins off the allow list untouched instead of refusing them")
	fl.StringVar(&f.timing, "timing", "fast", "replayed streams: fast, realtime, or a factor of the recorded delays")
	fl.StringVar(&f.caDir, "ca-dir", "", "directory of the CA (default $XDG_CONFIG_HOME/agentvcr)")
	fl.StringVar(&f.usedFile, "used-file", "", "on exit, write which recordings this run used, for recorder prune")
	fl.BoolVar(&f.listenAny, "listen-any", false, "let --listen be an address other than loopback (the proxy then intercepts for anyone who reaches it)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "log warnings and errors only, not each exchange")
	fl.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fl.DurationVar(&f.headerTimeout, "header-timeout", 30*time.Second, "close a connection that sends no request header within this (from its start, a tunnel's answer, or a request's first byte); 0 for none")
	fl.DurationVar(&f.handshakeTimeout, "handshake-timeout", 30*time.Second, "close a tunnel whose TLS handshake takes longer; 0 for none")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 2*time.Minute, "close a keep-alive connection idle for longer; 0 for none")
	fl.BoolVar(&f.mockSlack, "mock-slack", false, "answer the slack rule from the Slack mock: seed and read it with /v1/slack/...")
	fl.BoolVar(&f.fakeModel, "fake-model", false, "answer the model rules (model, anthropic, openai) from the scripted model: script it with POST /v1/fakeai/respond")
	fl.BoolVar(&f.exitOnStdinClose, "exit-on-stdin-close", false, "read standard input and stop, as on SIGTERM, at its end: the proxy then ends with the parent that holds the pipe, however it dies")
	fl.StringArrayVar(&f.upstreamCAs, "upstream-ca", nil, "also trust the CA certificates in this PEM file for upstream TLS (a private CA's gateway or test server); repeatable")
	return cmd
}

// proxyModes are the modes --mode takes: fake answers model requests
// only, so it is a rule's mode (or --fake-model's), never the proxy's.
var proxyModes = []string{string(proxy.ModeAuto), string(proxy.ModeReplay), string(proxy.ModeRecord), string(proxy.ModePassthrough), string(proxy.ModeMock)}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// upstreamRoots returns the system roots and the certificates in files,
// or nil when files is empty.
func upstreamRoots(files []string) (*x509.CertPool, error) {
	if len(files) == 0 {
		return nil, nil
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, cli.Usagef("--upstream-ca: %v", err)
		}
		if !roots.AppendCertsFromPEM(b) {
			return nil, cli.Usagef("--upstream-ca %s: no PEM certificate in it", name)
		}
	}
	return roots, nil
}

// build makes the proxy the flags describe, logging to logTo through
// the returned handler, which the caller closes.
func (f *proxyFlags) build(e *env, logTo *batchwriter.Writer) (*proxy.Proxy, *ca.Authority, *slogbatch.Handler, error) {
	mode := proxy.ModeAuto
	if e.getenv("CI") != "" {
		mode = proxy.ModeReplay
	}
	if f.mode != "" {
		m, err := proxy.ParseMode(f.mode)
		if m == proxy.ModeFake {
			return nil, nil, nil, cli.Usagef("--mode fake: the scripted model answers model requests only; pass --fake-model to answer the model rules from it")
		}
		if err != nil {
			return nil, nil, nil, cli.Usagef("--mode %q: use %s", f.mode, orList(proxyModes))
		}
		mode = m
	}
	var timing proxy.Timing
	switch f.timing {
	case "fast":
	case "realtime":
		timing.Scale = 1
	default:
		x, err := strconv.ParseFloat(f.timing, 64)
		if err != nil || x < 0 {
			return nil, nil, nil, cli.Usagef("--timing %q: use fast, realtime or a factor such as 0.5", f.timing)
		}
		timing.Scale = x
	}
	level := slog.LevelInfo
	if f.quiet {
		level = slog.LevelWarn
	}
	var handler slog.Handler
	switch f.logFormat {
	case "text":
		handler = slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: level})
	case "json":
		handler = slog.NewJSONHandler(logTo, &slog.HandlerOptions{Level: level})
	default:
		return nil, nil, nil, cli.Usagef("--log-format %q: use text or json", f.logFormat)
	}
	for _, o := range f.allow {
		if _, err := proxy.ParseOrigin(o); err != nil {
			return nil, nil, nil, cli.Usagef("--allow: %v", err)
		}
	}
	allow, rules, passthrough := proxy.DefaultAllow(), proxy.DefaultRules(), f.passthroughUnlisted
	if f.config != "" {
		c, err := proxy.LoadConfig(f.config)
		if err != nil {
			return nil, nil, nil, cli.UsageError{Err: err}
		}
		allow, rules, passthrough = c.Allow, c.Rules, c.PassthroughUnlisted || passthrough
	}
	if f.fakeModel {
		faked := 0
		for i := range rules {
			if slices.Contains(strings.Split(modelRules, ", "), rules[i].Name) {
				rules[i].Mode = proxy.ModeFake
				faked++
			}
		}
		if faked == 0 {
			return nil, nil, nil, cli.Usagef("--fake-model: no rule is named %s (see --config)", modelRules)
		}
	}
	if f.mockSlack {
		i := slices.IndexFunc(rules, func(r proxy.Rule) bool { return r.Name == "slack" })
		if i < 0 {
			return nil, nil, nil, cli.Usagef("--mock-slack: no rule is named slack (see --config)")
		}
		rules[i].Mode = proxy.ModeMock
	}
	roots, err := upstreamRoots(f.upstreamCAs)
	if err != nil {
		return nil, nil, nil, err
	}
	authority, err := ca.Open(f.caDir)
	if err != nil {
		return nil, nil, nil, err
	}
	var deadlines [3]time.Duration
	for i, fd := range []struct {
		name string
		d    time.Duration
	}{{"header-timeout", f.headerTimeout}, {"handshake-timeout", f.handshakeTimeout}, {"idle-timeout", f.idleTimeout}} {
		switch {
		case fd.d < 0:
			return nil, nil, nil, cli.Usagef("--%s %s: want a duration such as 30s, or 0 for none", fd.name, fd.d)
		case fd.d == 0:
			deadlines[i] = -1 // none: the proxy's zero is its default
		default:
			deadlines[i] = fd.d
		}
	}
	// A request waits neither for its line to be formatted nor for it to
	// be written: the log's goroutines do both. A warning is formatted
	// at once, and written with every line before it, before the request
	// goes on.
	logs := slogbatch.New(handler, logTo.Flush)
	return &proxy.Proxy{CA: authority, Allow: append(allow, f.allow...), PassthroughUnlisted: passthrough, Rules: rules,
		Mode: mode, Dir: f.dir, Timing: timing, Log: slog.New(logs), UpstreamRoots: roots,
		ReadHeaderTimeout: deadlines[0], HandshakeTimeout: deadlines[1], IdleTimeout: deadlines[2]}, authority, logs, nil
}

func (f *proxyFlags) run(ctx context.Context, cmd *cobra.Command, e *env) error {
	// A request does not wait for its log line: the exchanges' lines are
	// formatted on the log's own goroutine, and go out from the writer's,
	// together, within 50 ms; a warning at once. Everything the command
	// says on stderr until it returns goes the same way, in order.
	stderr := batchwriter.New(e.stderr)
	defer stderr.Close()
	p, authority, logs, err := f.build(e, stderr)
	if err != nil {
		return err
	}
	defer logs.Close() // before stderr's Close: its lines are written
	if f.exitOnStdinClose {
		// Canceled as a signal cancels ctx: the same stop follows.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			_, err := io.Copy(io.Discard, e.stdin)
			if err == nil {
				p.Log.Info("standard input closed (--exit-on-stdin-close)")
			} else {
				p.Log.Warn("standard input unreadable (--exit-on-stdin-close): " + err.Error())
			}
			cancel()
		}()
	}
	sm, model := slack.New(), fakeai.NewModel(func(s string) { p.Log.Warn(s) })
	p.Slack, p.Fake = sm, model
	if err := p.Start(); err != nil {
		return err
	}
	if host, _, err := net.SplitHostPort(f.listen); err != nil {
		return cli.Usagef("--listen %q: want host:port, such as 127.0.0.1:8899", f.listen)
	} else if !f.listenAny && !isLoopback(host) {
		return cli.Usagef("--listen %s: the proxy intercepts TLS for whoever reaches it, so it listens on loopback; pass --listen-any to listen on %s", f.listen, host)
	}
	proxyLn, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", f.listen, err)
	}
	controlLn, err := net.Listen("tcp", f.control)
	if err != nil {
		proxyLn.Close()
		return fmt.Errorf("listen %s: %w", f.control, err)
	}
	if !controlLn.Addr().(*net.TCPAddr).IP.IsLoopback() {
		proxyLn.Close()
		controlLn.Close()
		return cli.Usagef("--control %s: the control API listens on loopback only", f.control)
	}
	tokenBytes := make([]byte, 24)
	if _, err := rand.Read(tokenBytes); err != nil {
		return err
	}
	token := hex.EncodeToString(tokenBytes)
	proxyURL := "http://" + proxyLn.Addr().String()
	environ, err := proxy.Env(proxyURL, authority, p.Allow)
	if err != nil {
		return err
	}
	caveats := proxy.EnvCaveats(p.Allow)
	// The control port drops a stalled client as the proxy's port does.
	proxySrv := p.Server()
	controlSrv := &http.Server{Handler: control.New(token, p, sm, model),
		ReadHeaderTimeout: proxySrv.ReadHeaderTimeout, IdleTimeout: proxySrv.IdleTimeout}
	servers := []*http.Server{proxySrv, controlSrv}
	errs := make(chan error, 2)
	for i, ln := range []net.Listener{proxyLn, controlLn} {
		go func() { errs <- servers[i].Serve(ln) }()
	}
	// The start's garbage (the scratch of the binary's package
	// initializers, the CA's and the cassette index's) goes back to the
	// system now rather than a little at a time: a proxy stays up for a
	// whole test run, and its resident memory is what it holds.
	debug.FreeOSMemory()
	ready, _ := json.Marshal(map[string]any{"proxy": proxyURL, "control": "http://" + controlLn.Addr().String(),
		"token": token, "ca": authority.CertPath, "env": environ, "warnings": caveats})
	fmt.Fprintln(e.stdout, string(ready))
	if cli.IsTerminal(e.stderr) {
		f.banner(stderr, p, proxyURL, caveats)
	}

	select {
	case <-ctx.Done():
	case err := <-errs:
		return err
	}
	// Said through the log, so that --log-format json stays JSON lines.
	lg := p.Log
	lg.Info("stopping: no new requests; the exchanges in flight may finish", slog.Duration("within", stopTimeout))
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(stopCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
	}
	if err := p.Shutdown(stopCtx); err != nil {
		lg.Warn("cut off: "+err.Error(), slog.Duration("after", stopTimeout))
	}
	// An interrupted test did not pass: its recordings are not written.
	if name := p.OpenScope(); name != "" {
		res, err := p.EndScope(name, false)
		if err != nil {
			lg.Warn("scope not ended", slog.String("scope", name), slog.String("error", err.Error()))
		} else {
			lg.Warn("scope ended as failed: its recordings are not written", slog.String("scope", name), slog.Int("dropped", res.Dropped))
		}
	}
	// Recordings are written in the background: all of them before exit.
	if err := p.Flush(); err != nil {
		return err
	}
	if f.usedFile != "" {
		if err := atomicfile.Write(f.usedFile, 0o644, func(w io.Writer) error {
			return json.NewEncoder(w).Encode(p.Used())
		}); err != nil {
			return err
		}
	}
	s := p.Stats()
	lg.Info("stopped: interrupted", slog.Int("replayed", s.Replayed), slog.Int("recorded", s.Recorded), slog.Int("missed", s.Missed),
		slog.Int("live", s.Live), slog.Int("passthrough", s.Passthrough), slog.Int("mocked", s.Mocked), slog.Int("refused", s.Refused))
	return cli.Reported{Err: cli.ErrInterrupted}
}

// banner tells a person at a terminal what the proxy serves and what to
// run next.
func (f *proxyFlags) banner(w io.Writer, p *proxy.Proxy, proxyURL string, caveats []string) {
	fmt.Fprintf(w, "recorder proxy: mode %s, cassettes in %s\n", p.Mode, f.dir)
	fmt.Fprintf(w, "recorder proxy: allowing %s\n", strings.Join(p.Allow, ", "))
	next := "recorder env"
	if proxyURL != "http://127.0.0.1:8899" {
		next += " --proxy " + proxyURL
	}
	for _, a := range p.Allow {
		if u, err := url.Parse(a); err == nil && isLoopback(u.Hostname()) {
			// NO_PROXY empty, as in the start line's env.
			next += " --allow " + a
		}
	}
	if f.caDir != "" {
		next += " --ca-dir " + f.caDir
	}
	for _, c := range caveats {
		fmt.Fprintf(w, "recorder proxy: warning: %s\n", c)
	}
	fmt.Fprintf(w, "recorder proxy: next, in the agent's shell: eval \"$(%s)\"; then run the agent. Ctrl-C stops.\n", next)
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}
