package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/agentvcr/agentvcr/proxy/ca"
	"github.com/agentvcr/agentvcr/proxy/cassette"
	"github.com/agentvcr/agentvcr/proxy/wire"
)

// Mode says what the proxy does with a request.
type Mode string

// The modes.
const (
	ModeAuto        Mode = "auto"
	ModeReplay      Mode = "replay"
	ModeRecord      Mode = "record"
	ModePassthrough Mode = "passthrough"
	// ModeMock serves the rule's requests from Proxy.Slack, in process.
	ModeMock Mode = "mock"
	// ModeFake answers the rule's model requests from Proxy.Fake, a
	// scripted model, in process.
	ModeFake Mode = "fake"
)

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAuto, ModeReplay, ModeRecord, ModePassthrough, ModeMock, ModeFake:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q: use auto, replay, record, passthrough, mock or fake", s)
}

// Header is the response header that says what the proxy did: an Outcome.
const Header = "X-Agentvcr"

// Outcome is what the proxy did with a request, as its response's Header
// says.
type Outcome string

// The outcomes.
const (
	OutcomeReplayed    Outcome = "replayed"    // answered from a recording
	OutcomeRecorded    Outcome = "recorded"    // went live, and the response is recorded
	OutcomeLive        Outcome = "live"        // went live, not recorded: a 429 or 5xx, a WebSocket, or the upstream failed
	OutcomeMissed      Outcome = "missed"      // no recording in replay: 412 (502 when the cassette cannot be read), nothing went live
	OutcomePassthrough Outcome = "passthrough" // went live, nothing written: a rule in mode passthrough, or no rule
	OutcomeMocked      Outcome = "mocked"      // answered by the Slack mock
	OutcomeFaked       Outcome = "faked"       // answered by the scripted model
	OutcomeFault       Outcome = "fault"       // answered by an injected fault
	OutcomeRefused     Outcome = "refused"     // off the allow list: 403
)

// OutcomeOf returns the outcome resp's Header says; "" when the proxy did
// not answer it (a tunnelled origin).
func OutcomeOf(resp *http.Response) Outcome { return Outcome(resp.Header.Get(Header)) }

// Rule matches requests and says how to record and replay them.
type Rule struct {
	// Name names the rule's cassette: <Dir>/<Name>.yaml.
	Name string `json:"name" yaml:"name"`
	// Method, URLPrefix and Headers (exact values, names in any case)
	// must all match when set.
	Method    string            `json:"method,omitempty" yaml:"method"`
	URLPrefix string            `json:"url,omitempty" yaml:"url"`
	Headers   map[string]string `json:"headers,omitempty" yaml:"headers"`
	// KeyHeaders are request headers that are part of the key.
	KeyHeaders []string `json:"keyHeaders,omitempty" yaml:"keyHeaders"`
	// Values name more changing values, as regular expressions, beside
	// the UUIDs, times and epoch milliseconds every rule knows.
	Values map[string]string `json:"values,omitempty" yaml:"values"`
	// Mode overrides the proxy's mode for this rule.
	Mode Mode `json:"mode,omitempty" yaml:"mode"`
	// Dialect names the model dialect of the rule's requests for
	// progress events (anthropic, openai-chat, openai-responses, ai-sdk,
	// or none); empty means the one the path names.
	Dialect wire.Dialect `json:"dialect,omitempty" yaml:"dialect"`
}

// values returns the rule's changing values: its own, then the defaults.
func (r *Rule) values() ([]cassette.Value, error) {
	names := make([]string, 0, len(r.Values))
	for name := range r.Values {
		names = append(names, name)
	}
	slices.Sort(names)
	var vs []cassette.Value
	for _, name := range names {
		re, err := regexp.Compile(r.Values[name])
		if err != nil {
			return nil, fmt.Errorf("proxy: rule %s: value %s: %w", r.Name, name, err)
		}
		vs = append(vs, cassette.Value{Name: name, Re: re})
	}
	return append(vs, cassette.DefaultValues()...), nil
}

// matches reports whether req, whose URL is u, is the rule's.
func (r *Rule) matches(req *http.Request, u string) bool {
	if r.Method != "" && !strings.EqualFold(r.Method, req.Method) {
		return false
	}
	if r.URLPrefix != "" && !strings.HasPrefix(u, r.URLPrefix) {
		return false
	}
	for name, want := range r.Headers {
		if req.Header.Get(name) != want {
			return false
		}
	}
	return true
}

// Timing says how fast a replayed stream is sent.
type Timing struct {
	// Scale multiplies the recorded delays between chunks: 0 sends them
	// at once (fast), 1 as they came (realtime).
	Scale float64
}

// Proxy records and replays the HTTPS traffic of an agent. Its exported
// fields are configuration: set them, then call Start or serve it. Start
// reads them once, filling in defaults where they are zero, and a later
// change has no effect; to run with another configuration, start another
// Proxy on the same Dir.
type Proxy struct {
	// CA signs the certificates the proxy shows the agent. Required: the
	// proxy never uses goproxy's built-in CA, whose key is public.
	CA *ca.Authority
	// Allow lists the origins (scheme://host[:port]) the proxy reaches.
	Allow []string
	// PassthroughUnlisted tunnels other origins untouched instead of
	// refusing them.
	PassthroughUnlisted bool
	// Rules are tried in order. A request to an allowed origin that no
	// rule matches follows the proxy's Mode too, recorded in a cassette
	// of its own named after the origin (origin-<host>[_<port>].yaml):
	// only a rule in mode passthrough sends requests live in replay.
	Rules []Rule
	// Mode is the mode of rules that set none; empty means auto.
	Mode Mode
	// Dir holds the cassettes.
	Dir string
	// Upstream sends live requests; nil means a transport that verifies
	// certificates against the system roots (or UpstreamRoots) and
	// ignores proxy settings in the environment (the proxy must not send
	// its traffic to itself).
	Upstream http.RoundTripper
	// UpstreamRoots, if set, are the roots the default Upstream verifies
	// upstream certificates against, in place of the system roots: an
	// upstream whose certificate a private CA signed (a staging gateway,
	// a test's TLS server) needs its CA here. Unused when Upstream is set.
	UpstreamRoots *x509.CertPool
	// Timing paces replayed streams.
	Timing Timing
	// MaxRecord caps the recorded copy of one response body; a longer
	// response streams to the agent whole and is not recorded. 0 means
	// 32 MiB.
	MaxRecord int
	// Log, if set, gets a record for each exchange (level Info: method,
	// url, status, outcome as in the X-Agentvcr header, rule, and ms to
	// the response's headers), for each recording kept (Debug), and for
	// what a user must know: a replay miss and a response not recorded
	// (Warn), a cassette not written (Error). URLs are logged redacted as
	// cassettes store them.
	Log *slog.Logger
	// Slack serves the rules in mode mock: the Slack mock of package
	// proxy/slack, or a Mock of the caller's. Start fails when a rule is
	// in mode mock and Slack is nil.
	Slack Mock
	// Fake answers the rules in mode fake: the scripted model of package
	// fakeai, or a Fake of the caller's. Its failures (an unscripted
	// prompt) fail the open test scope. Start fails when a rule is in
	// mode fake and Fake is nil.
	Fake Fake
	// HoldTimeout bounds how long an event handler may keep a request
	// waiting; 0 means 60 s. A hold that outlasts it fails the request
	// with a HoldExpiredError.
	HoldTimeout time.Duration
	// Classify, if set, names the purpose of a model request (an agent
	// loop, a title, a router, a judge) for its model_request event;
	// nil means DefaultClassify.
	Classify func(wire.Request) string
	// ReadHeaderTimeout bounds how long the agent may take to send a
	// request's header on a connection: from its start (the CONNECT's,
	// and in a tunnel from the proxy's 200 and again after the TLS
	// handshake), and from the first byte of each request after. A
	// client that connects and sends nothing would otherwise hold a
	// goroutine and a socket until it hung up. 0 means 30 s; negative,
	// no deadline.
	ReadHeaderTimeout time.Duration
	// HandshakeTimeout bounds the TLS handshake of a tunnel the proxy
	// intercepts. 0 means 30 s; negative, no deadline.
	HandshakeTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for the
	// agent's next request. 0 means 2 min, longer than the 90 s after
	// which Go's and Node's clients drop an idle connection themselves,
	// so that the client, not the proxy, usually closes it and no
	// request meets a connection the proxy is closing; negative, no
	// deadline.
	//
	// The proxy applies these three to the tunnels it intercepts. A
	// plain HTTP connection (a request to an http:// origin, or the
	// CONNECT itself) is the http.Server's: serve the proxy with Server,
	// or give yours the same ReadHeaderTimeout and IdleTimeout.
	IdleTimeout time.Duration

	once    sync.Once
	initErr error
	c       config // the fields above as Start read them, defaults filled
	server  *goproxy.ProxyHttpServer
	mu      sync.Mutex
	rules   []*ruleState // Rules, then one rule per allowed origin
	stats   Stats
	misses  []MissReport
	scope   *scope                  // the open test scope, if any
	used    map[string]map[int]bool // rule -> ids of the interactions this run replayed from its cassettes

	events   events
	injected faults
	writer   *cassetteWriter
	inflight flights
}

// config is a proxy's configuration as Start read it, with the defaults
// filled in. The exported fields are read once, so that a caller who
// changes one later changes nothing half-way.
type config struct {
	mode                Mode
	maxRecord           int
	slack               Mock
	fake                Fake
	holdTimeout         time.Duration
	classify            func(wire.Request) string
	upstream            http.RoundTripper
	timing              Timing
	dir                 string
	log                 *slog.Logger
	allow               []string
	passthroughUnlisted bool
	ca                  *ca.Authority
	// The deadlines, defaults filled in; negative means none.
	readHeaderTimeout, handshakeTimeout, idleTimeout time.Duration
}

// The defaults of MaxRecord and HoldTimeout.
const (
	defaultMaxRecord   = 32 << 20
	defaultHoldTimeout = 60 * time.Second
)

type ruleState struct {
	rule    Rule
	matcher *cassette.Matcher
	index   *cassette.Index
	// cassette is what a recording rule holds in memory: what its file
	// held at start, then what it recorded; nil for a rule in mode
	// replay, which writes nothing.
	cassette *cassette.Cassette
	path     string

	// Of a recording rule, under the proxy's lock: what it recorded, to
	// be merged into its file when the writer next runs (outside a test
	// scope, or once the scope passed), and, once merged, the id each
	// recording got there (other proxies may have added to the file).
	unwritten []*cassette.Interaction
	written   map[*cassette.Interaction]int
	recorded  map[*cassette.Interaction]bool
	// base is what the file held at start, by key: in mode record, what
	// a recording of the same request replaces. Read only.
	base map[string][]*cassette.Interaction
}

// mode is the rule's mode, or the proxy's when the rule has none.
func (st *ruleState) mode(proxy Mode) Mode {
	if st.rule.Mode != "" {
		return st.rule.Mode
	}
	return proxy
}

// Stats counts what the proxy did.
type Stats struct {
	Replayed    int `json:"replayed"`
	Recorded    int `json:"recorded"`
	Missed      int `json:"missed"`
	Live        int `json:"live"`
	Passthrough int `json:"passthrough"`
	Mocked      int `json:"mocked"`
	Faked       int `json:"faked"`
	Refused     int `json:"refused"`
}

// MissReport is one replay miss, for the 412 body and GET /v1/misses.
type MissReport struct {
	Rule   string `json:"rule"`
	Method string `json:"method"`
	URL    string `json:"url"`
	cassette.Miss
}

// ErrBuiltinCA is returned by a proxy configured without its own CA.
var ErrBuiltinCA = errors.New("proxy: no CA: goproxy's built-in CA has a public key; load agentvcr's with ca.Load")

func (p *Proxy) init() error {
	p.once.Do(func() { p.initErr = p.setup() })
	return p.initErr
}

func (p *Proxy) setup() error {
	if p.CA == nil {
		return ErrBuiltinCA
	}
	c := config{mode: p.Mode, maxRecord: p.MaxRecord, slack: p.Slack, fake: p.Fake, holdTimeout: p.HoldTimeout, classify: p.Classify,
		upstream: p.Upstream, timing: p.Timing, dir: p.Dir, log: p.Log, allow: slices.Clone(p.Allow),
		passthroughUnlisted: p.PassthroughUnlisted, ca: p.CA,
		readHeaderTimeout: orDefault(p.ReadHeaderTimeout, defaultReadHeaderTimeout),
		handshakeTimeout:  orDefault(p.HandshakeTimeout, defaultHandshakeTimeout),
		idleTimeout:       orDefault(p.IdleTimeout, defaultIdleTimeout)}
	if c.mode == "" {
		c.mode = ModeAuto
	}
	if c.maxRecord == 0 {
		c.maxRecord = defaultMaxRecord
	}
	if c.holdTimeout == 0 {
		c.holdTimeout = defaultHoldTimeout
	}
	if c.classify == nil {
		c.classify = DefaultClassify
	}
	if c.upstream == nil {
		c.upstream = &http.Transport{
			Proxy:               nil,
			TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.UpstreamRoots},
			ForceAttemptHTTP2:   true,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			// A model can think for minutes before its first byte; an
			// upstream silent for longer than this is hung.
			ResponseHeaderTimeout: 5 * time.Minute,
		}
	}
	for _, o := range c.allow {
		if _, err := ParseOrigin(o); err != nil {
			return fmt.Errorf("proxy: allow: %w", err)
		}
	}
	p.c = c
	rules := append([]Rule(nil), p.Rules...)
	for _, o := range c.allow {
		rules = append(rules, Rule{Name: originRule(o), URLPrefix: strings.TrimSuffix(o, "/") + "/"})
	}
	for _, r := range rules {
		if _, ok := wire.ParseDialect(string(r.Dialect)); !ok && r.Dialect != "" && r.Dialect != "none" {
			return fmt.Errorf("rule %s: unknown dialect %q: use anthropic, openai-chat, openai-responses, ai-sdk or none", r.Name, r.Dialect)
		}
		values, err := r.values()
		if err != nil {
			return err
		}
		st := &ruleState{rule: r, matcher: &cassette.Matcher{KeyHeaders: r.KeyHeaders, Values: values}, index: cassette.NewIndex(),
			path: filepath.Join(p.c.dir, r.Name+".yaml")}
		switch mode := st.mode(c.mode); {
		case mode == ModeMock && c.slack == nil:
			return fmt.Errorf("proxy: rule %s is in mode mock and Proxy.Slack is nil: give it the Slack mock (slack.New)", r.Name)
		case mode == ModeFake && c.fake == nil:
			return fmt.Errorf("proxy: rule %s is in mode fake and Proxy.Fake is nil: give it a scripted model (fakeai.NewModel)", r.Name)
		}
		if st.mode(c.mode) == ModeReplay {
			// A replay records nothing, so it needs no more of its
			// cassette than the index, and reads each interaction
			// when it is served: start-up does not grow with the
			// cassette.
			if x, err := cassette.Open(st.matcher, st.path); err == nil {
				st.index = x
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
		} else {
			st.cassette = &cassette.Cassette{Version: cassette.FormatVersion}
			st.written, st.recorded, st.base = map[*cassette.Interaction]int{}, map[*cassette.Interaction]bool{}, map[string][]*cassette.Interaction{}
			if c, err := cassette.Load(st.path); err == nil {
				st.cassette = c
				for _, in := range c.Interactions {
					st.index.Add(st.matcher, in)
					st.base[in.Key] = append(st.base[in.Key], in)
				}
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		p.rules = append(p.rules, st)
	}
	p.writer = newCassetteWriter(p)
	p.warnEmptyReplay()
	gp := goproxy.NewProxyHttpServer()
	gp.Tr = nil
	gp.ConnectDial = func(network, addr string) (net.Conn, error) { return (&net.Dialer{}).Dial(network, addr) }
	gp.Logger = log.New(io.Discard, "", 0)
	gp.OnRequest().HandleConnectFunc(func(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
		if wt, ok := ctx.Req.Context().Value(connKey{}).(*watch); ok {
			ctx.UserData = wt
		}
		if !p.allowed("https://"+host) && p.c.passthroughUnlisted {
			p.count(func(s *Stats) { s.Passthrough++ })
			p.log(slog.LevelInfo, "tunnel", slog.String("host", host), slog.String("outcome", string(OutcomePassthrough)))
			return &goproxy.ConnectAction{Action: goproxy.ConnectAccept}, host
		}
		// Unlisted origins are intercepted too, so that the refusal can
		// be an HTTP response that says what to do.
		wt := watchOf(ctx)
		if wt == nil {
			// A CONNECT over HTTP/2, when an embedder serves the proxy
			// over TLS: its stream is no connection to hijack, and lives
			// only while goproxy's handler runs. goproxy's own loop serves
			// it, uncorked.
			return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: func(host string, _ *goproxy.ProxyCtx) (*tls.Config, error) {
				return p.c.ca.TLSConfig(stripPort(host)), nil
			}}, host
		}
		return &goproxy.ConnectAction{Action: goproxy.ConnectHijack, Hijack: func(connect *http.Request, client net.Conn, _ *goproxy.ProxyCtx) {
			go p.intercept(connect, client, wt, host)
		}}, host
	})
	gp.OnRequest().DoFunc(p.onRequest)
	p.server = gp
	return nil
}

// onRequest routes one request the agent sent: refused, answered by the
// proxy, or given a RoundTripper that records, replays or passes it
// through. goproxy calls it for a plain HTTP request, intercept for one
// inside a tunnel.
func (p *Proxy) onRequest(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	start := time.Now()
	req, ok := p.begin(req)
	if !ok {
		resp := p.text(req, http.StatusServiceUnavailable, OutcomeRefused, "agentvcr proxy: stopping: no new requests\n")
		resp.Header.Set("Connection", "close")
		resp.Close = true
		p.logExchange(req, resp, "", start)
		resp, _ = watchOf(ctx).corked(resp, nil)
		return req, resp
	}
	if o := origin(req.URL); !p.allowed(o) {
		if p.c.passthroughUnlisted {
			ctx.RoundTripper = goproxy.RoundTripperFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
				return watchOf(ctx).corked(p.exchange(r, start, func() (*http.Response, error) { return p.passthrough(r) }))
			})
			return req, nil
		}
		p.count(func(s *Stats) { s.Refused++ })
		p.log(slog.LevelWarn, "refused: the origin is not on the allow list", request(req.Method, req.URL.String(), ""), slog.String("origin", o))
		resp := p.text(req, http.StatusForbidden, OutcomeRefused, fmt.Sprintf(
			"agentvcr proxy: %s is not on the allow list; allow it with --allow %s (or pass --passthrough-unlisted to tunnel unlisted origins)\n", o, o))
		p.inflight.done(req)
		p.logExchange(req, resp, "", start)
		resp, _ = watchOf(ctx).corked(resp, nil)
		return req, resp
	}
	ctx.RoundTripper = goproxy.RoundTripperFunc(func(r *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
		return watchOf(ctx).corked(p.exchange(r, start, func() (*http.Response, error) { return p.observe(r) }))
	})
	return req, nil
}

// ServeHTTP serves the proxy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := p.init(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w, r = watchConnect(w, r)
	p.server.ServeHTTP(w, r)
}

// Start checks the configuration and loads the cassettes; ServeHTTP calls
// it too.
func (p *Proxy) Start() error { return p.init() }

// Stats returns a snapshot of the counts.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Misses returns the replay misses so far.
func (p *Proxy) Misses() []MissReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]MissReport{}, p.misses...)
}

func (p *Proxy) count(f func(*Stats)) {
	p.mu.Lock()
	f(&p.stats)
	p.mu.Unlock()
}

func (p *Proxy) allowed(o string) bool {
	for _, a := range p.c.allow {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), o) || strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(o, ":443")) {
			return true
		}
	}
	return false
}

func origin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func stripPort(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// rule returns the first rule req matches, or nil. A request that came
// through begin has its rule in its flight (ruleOf).
func (p *Proxy) rule(req *http.Request) *ruleState {
	u := req.URL.String()
	for _, st := range p.rules {
		if st.rule.matches(req, u) {
			return st
		}
	}
	return nil
}

// ruleOf returns the rule begin found for req, or finds it for a request
// that did not come through begin.
func (p *Proxy) ruleOf(req *http.Request) *ruleState {
	if fl := flightOf(req); fl != nil {
		return fl.st
	}
	return p.rule(req)
}

// originRule names the rule of an allowed origin that no rule covers:
// https://api.example.com:8443 is origin-api.example.com_8443.
func originRule(o string) string {
	u, err := url.Parse(strings.TrimSuffix(o, "/"))
	host := o
	if err == nil && u.Host != "" {
		host = u.Host
	}
	return "origin-" + strings.NewReplacer(":", "_", "/", "_").Replace(strings.ToLower(host))
}

func (p *Proxy) log(level slog.Level, msg string, attrs ...slog.Attr) {
	if p.c.log != nil {
		p.c.log.LogAttrs(context.Background(), level, msg, attrs...)
	}
}

// request is the attributes that say which request a record is about.
func request(method, rawURL, rule string) slog.Attr {
	return slog.Group("", slog.String("method", method), slog.String("url", cassette.RedactURL(rawURL)), slog.String("rule", rule))
}

// warnEmptyReplay warns when the proxy replays and has nothing to replay:
// every request would miss, which a user should learn before the first.
func (p *Proxy) warnEmptyReplay() {
	replaying, recorded := false, 0
	for _, st := range p.rules {
		if st.mode(p.c.mode) == ModeReplay {
			replaying = true
			recorded += st.index.Len()
		}
	}
	if replaying && recorded == 0 {
		p.log(slog.LevelWarn, "replay with no recordings: every request will miss; record them first in mode auto or record", slog.String("dir", p.c.dir))
	}
}

// exchange runs the round trip of a request counted in flight (begin),
// keeps it counted until its response is written, and logs it.
func (p *Proxy) exchange(req *http.Request, start time.Time, roundTrip func() (*http.Response, error)) (*http.Response, error) {
	resp, err := roundTrip()
	if err != nil || resp == nil {
		p.inflight.done(req)
		return resp, err
	}
	p.track(req, resp)
	if p.logging() {
		rule := ""
		if st := p.ruleOf(req); st != nil {
			rule = st.rule.Name
		}
		p.logExchange(req, resp, rule, start)
	}
	return resp, nil
}

// logging says whether the per-exchange line is written: a request pays
// for it only then.
func (p *Proxy) logging() bool {
	return p.c.log != nil && p.c.log.Enabled(context.Background(), slog.LevelInfo)
}

func (p *Proxy) logExchange(req *http.Request, resp *http.Response, rule string, start time.Time) {
	if !p.logging() {
		return
	}
	p.log(slog.LevelInfo, "exchange", slog.String("method", req.Method), slog.String("url", redactedURL(req)), slog.String("rule", rule), slog.Int("status", resp.StatusCode),
		slog.String("outcome", resp.Header.Get(Header)), slog.Float64("ms", float64(time.Since(start).Microseconds())/1000))
}

// redactedURL is req's URL as the log, the events and cassettes have it:
// redacted once, by begin, for a request that came through it.
func redactedURL(req *http.Request) string {
	if fl := flightOf(req); fl != nil {
		return fl.url
	}
	return cassette.RedactURL(req.URL.String())
}

// serve answers one allowed request by the mode of its rule, st (nil
// when no rule matched).
func (p *Proxy) serve(req *http.Request, st *ruleState) (*http.Response, error) {
	if st == nil {
		return p.passthrough(req)
	}
	mode := st.mode(p.c.mode)
	if mode == ModePassthrough {
		return p.passthrough(req)
	}
	if mode == ModeFake {
		resp := inProcess(p.c.fake, req)
		resp.Header.Set(Header, string(OutcomeFaked))
		p.count(func(s *Stats) { s.Faked++ })
		return resp, nil
	}
	if mode == ModeMock {
		rec := httptest.NewRecorder()
		p.c.slack.ServeHTTP(rec, req)
		resp := rec.Result()
		resp.Header.Set(Header, string(OutcomeMocked))
		p.count(func(s *Stats) { s.Mocked++ })
		return resp, nil
	}
	if isUpgrade(req) {
		return p.serveUpgrade(req, st, mode)
	}
	body, err := readBody(req)
	if err != nil {
		return p.text(req, http.StatusBadRequest, "", "agentvcr proxy: cannot read the request body: "+err.Error()+"\n"), nil
	}
	creq := captured(req, body)
	key := st.matcher.Key(&creq)
	if mode == ModeAuto || mode == ModeReplay {
		in, ok, err := st.index.Next(key)
		if err != nil {
			return p.unreadable(req, st, err), nil
		}
		if ok {
			p.count(func(s *Stats) { s.Replayed++ })
			p.markUsed(st, in)
			return p.replay(req, st, in, &creq), nil
		}
		if mode == ModeReplay {
			nearest, err := st.index.Nearest(st.matcher.Parts(&creq))
			if err != nil {
				return p.unreadable(req, st, err), nil
			}
			miss := MissReport{Rule: st.rule.Name, Method: req.Method, URL: redactedURL(req), Miss: nearest}
			p.mu.Lock()
			p.stats.Missed++
			if len(p.misses) < maxMisses {
				p.misses = append(p.misses, miss)
			}
			p.mu.Unlock()
			if miss.Nearest != nil {
				p.log(slog.LevelWarn, "missed: no recording matches", request(req.Method, req.URL.String(), st.rule.Name),
					slog.Int("nearest", miss.NearestID), slog.Any("differs", miss.Differ))
			} else {
				p.log(slog.LevelWarn, "missed: no recording matches, and the rule's cassette has none", request(req.Method, req.URL.String(), st.rule.Name))
			}
			b, _ := json.MarshalIndent(map[string]any{"error": "agentvcr proxy: no recording matches this request, and the mode is replay: nothing went live", "miss": miss}, "", "  ")
			return p.text(req, http.StatusPreconditionFailed, OutcomeMissed, string(b)+"\n"), nil
		}
	}
	creq.Headers = req.Header.Clone() // the recording keeps them as they were sent
	req.Body = io.NopCloser(bytes.NewReader(body))
	// The response is recorded whole even when the agent hangs up before
	// its end (SDKs stop reading after the last event): once the headers
	// are in, the agent going away no longer cancels the upstream request;
	// the tee ends it.
	upCtx, upCancel := context.WithCancel(context.WithoutCancel(req.Context()))
	var headers atomic.Bool
	stop := context.AfterFunc(req.Context(), func() {
		if !headers.Load() {
			upCancel()
		}
	})
	resp, err := p.upstream(req.WithContext(upCtx))
	headers.Store(true)
	if err != nil {
		stop()
		upCancel()
		return p.upstreamError(req, err), nil
	}
	resp.Header.Set(Header, string(OutcomeRecorded))
	if resp.Close {
		// Go's client takes "Connection: close" out of the header: put
		// back, the agent is told, and the recording keeps it.
		resp.Header.Set("Connection", "close")
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		resp.Header.Set(Header, string(OutcomeLive))
		p.count(func(s *Stats) { s.Live++ })
		p.log(slog.LevelWarn, "not recorded: a 429 or 5xx is never recorded", request(req.Method, req.URL.String(), st.rule.Name), slog.Int("status", resp.StatusCode))
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: func() { stop(); upCancel() }}
		return resp, nil
	}
	sc := p.currentScope()
	settled := func() {}
	if sc != nil {
		settled = sc.start()
	}
	resp.Body = &tee{ReadCloser: resp.Body, start: time.Now(), max: p.c.maxRecord, drain: drainTimeout,
		cancel: func() { stop(); upCancel(); settled() },
		done:   func(t *tee) { p.record(st, sc, &creq, resp, t); settled() },
		skip: func(why string) {
			p.log(slog.LevelWarn, "not recorded: "+why, request(req.Method, req.URL.String(), st.rule.Name))
		}}
	return resp, nil
}

// drainTimeout bounds how long the rest of a response is read for its
// recording after the agent hung up.
const drainTimeout = 30 * time.Second

// maxMisses caps the misses a proxy keeps for its report: a replay run
// against the wrong cassettes misses on every request, and the first few
// hundred say all there is to say without growing without bound.
const maxMisses = 500

// statusClientClosed is the status logged and answered when a request
// ends because the agent hung up while a test held it (nginx's 499): no
// HTTP status names it, and 5xx would read as the upstream's fault.
const statusClientClosed = 499

// cancelOnClose ends an upstream request when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// passthrough sends a request upstream and writes nothing.
func (p *Proxy) passthrough(req *http.Request) (*http.Response, error) {
	resp, err := p.upstream(req)
	if err != nil {
		return p.upstreamError(req, err), nil
	}
	resp.Header.Set(Header, string(OutcomePassthrough))
	p.count(func(s *Stats) { s.Passthrough++ })
	return resp, nil
}

func (p *Proxy) upstream(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.RequestURI = ""
	return p.c.upstream.RoundTrip(out)
}

// upstreamError answers for an upstream that failed: 504 when it timed
// out, 502 otherwise, with the reason, which it logs as a warning: it is
// why the agent's request failed.
func (p *Proxy) upstreamError(req *http.Request, err error) *http.Response {
	status := http.StatusBadGateway
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		status = http.StatusGatewayTimeout
	}
	msg := fmt.Sprintf("upstream %s failed: %v", origin(req.URL), err)
	if untrusted(err) {
		msg += "; if a private CA signed its certificate, trust that CA (recorder proxy --upstream-ca FILE, Proxy.UpstreamRoots)"
	}
	p.log(slog.LevelWarn, msg, request(req.Method, req.URL.String(), ""))
	p.count(func(s *Stats) { s.Live++ })
	return p.text(req, status, OutcomeLive, "agentvcr proxy: "+msg+"\n")
}

// untrusted reports whether err is an upstream certificate that failed
// verification.
func untrusted(err error) bool {
	var unknown x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknown) || errors.As(err, &verify)
}

func (p *Proxy) text(req *http.Request, status int, what Outcome, body string) *http.Response {
	ct := "text/plain; charset=utf-8"
	if strings.HasPrefix(body, "{") {
		ct = "application/json"
	}
	resp := goproxy.NewResponse(req, ct, status, body)
	resp.Header.Set(Header, string(what))
	return resp
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	if n := req.ContentLength; n > 0 && n <= 64<<20 {
		// One read into a buffer of the announced size, not a doubling
		// from 512 bytes.
		b := make([]byte, n)
		if _, err := io.ReadFull(req.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(req.Body)
}

// captured is the request as a cassette holds it. Its headers are the
// request's own, not a copy: a lookup only reads them, and the live path
// copies them before the request goes out.
func captured(req *http.Request, body []byte) cassette.Request {
	c := cassette.Request{Method: req.Method, URL: req.URL.String(), Host: req.URL.Host, Body: string(body), Headers: req.Header}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		c.Form, _ = url.ParseQuery(string(body))
	}
	return c
}

// tee passes a response body through while it keeps a copy, capped, with
// the time each chunk arrived; done runs once at the end of a body read
// whole, skip once with the reason when the body is not recorded.
type tee struct {
	io.ReadCloser
	start  time.Time
	max    int
	drain  time.Duration // how long Close reads the rest of an unfinished body
	buf    bytes.Buffer
	chunks []cassette.Chunk
	over   bool
	ended  bool // EOF was read
	failed error
	done   func(*tee)
	skip   func(why string)
	cancel func() // ends the upstream request
}

func (t *tee) Read(b []byte) (int, error) {
	n, err := t.ReadCloser.Read(b)
	if n > 0 && !t.over {
		if t.buf.Len()+n > t.max {
			t.over = true
			t.buf.Reset()
			t.chunks = nil
			t.skip(fmt.Sprintf("the body is over the %d-byte cap (MaxRecord)", t.max))
		} else {
			t.buf.Write(b[:n])
			t.chunks = append(t.chunks, cassette.Chunk{End: t.buf.Len(), After: time.Since(t.start).Milliseconds()})
		}
	}
	switch {
	case err == io.EOF && !t.ended:
		t.ended = true
		if !t.over {
			t.done(t)
		}
	case err != nil && err != io.EOF && t.failed == nil:
		t.failed = err
	}
	return n, err
}

// Close records a body the agent stopped reading before its end (an SDK
// hangs up after message_stop or [DONE]): it reads the rest, up to the cap
// and t.drain, then ends the upstream request.
func (t *tee) Close() error {
	if !t.ended && !t.over && t.failed == nil {
		timer := time.AfterFunc(t.drain, t.cancel)
		buf := make([]byte, 32<<10)
		for !t.ended && !t.over && t.failed == nil {
			if _, err := t.Read(buf); err != nil {
				break
			}
		}
		if !timer.Stop() && !t.ended {
			t.failed = fmt.Errorf("the agent hung up and the rest of the response took longer than %s", t.drain)
		}
	}
	if !t.ended && !t.over {
		t.skip(fmt.Sprintf("the response did not arrive whole: %v", t.failed))
	}
	t.cancel()
	return t.ReadCloser.Close()
}

// record keeps an interaction whose response was read whole: redacted
// and checked for secrets once, here, then kept in memory, where replays
// find it at once. Outside a test scope its cassette is written in the
// background (see cassetteWriter); inside one, the scope keeps it until
// it ends.
func (p *Proxy) record(st *ruleState, sc *scope, creq *cassette.Request, resp *http.Response, t *tee) {
	body := st.matcher.Template(t.buf.String(), st.matcher.RequestValues(creq))
	headers := resp.Header.Clone()
	headers.Del(Header)
	in := &cassette.Interaction{Request: *creq, Rule: st.rule.Name, Chunks: t.chunks,
		Response: cassette.Response{Code: resp.StatusCode, Status: resp.Status, Headers: headers, Body: body}}
	if len(body) != t.buf.Len() {
		in.Chunks = nil // templated values changed the length
	}
	if err := cassette.Prepare(in); err != nil {
		p.log(slog.LevelWarn, "not recorded", request(creq.Method, creq.URL, st.rule.Name), slog.String("error", err.Error()))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if sc != nil && sc.ended {
		// The scope this request started in ended failed while the
		// response streamed: its recordings are dropped.
		return
	}
	in.ID = len(st.cassette.Interactions)
	st.cassette.Interactions = append(st.cassette.Interactions, in)
	st.index.Add(st.matcher, in)
	st.recorded[in] = true
	p.stats.Recorded++
	if sc != nil {
		sc.recorded = append(sc.recorded, scoped{st, in})
		return
	}
	st.unwritten = append(st.unwritten, in)
	p.writer.mark(st)
	// Debug: the exchange's own line already said "recorded".
	p.log(slog.LevelDebug, "recorded", request(creq.Method, creq.URL, st.rule.Name), slog.Int("id", in.ID))
}

// markUsed notes that a replay served in. One this run recorded is used
// already, under the id its file gives it (see Used).
func (p *Proxy) markUsed(st *ruleState, in *cassette.Interaction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.recorded[in] {
		return
	}
	if p.used == nil {
		p.used = map[string]map[int]bool{}
	}
	if p.used[st.rule.Name] == nil {
		p.used[st.rule.Name] = map[int]bool{}
	}
	p.used[st.rule.Name][in.ID] = true
}

// Used returns, by rule, the ids of the interactions this run replayed or
// recorded, sorted: what `recorder prune` keeps. A recording has an id
// once it is written (call Flush first), the one its cassette gave it,
// which other proxies writing the same cassette may have made differ
// from its place in this run.
func (p *Proxy) Used() map[string][]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := map[string]map[int]bool{}
	add := func(rule string, id int) {
		if ids[rule] == nil {
			ids[rule] = map[int]bool{}
		}
		ids[rule][id] = true
	}
	for rule, used := range p.used {
		for id := range used {
			add(rule, id)
		}
	}
	for _, st := range p.rules {
		for _, id := range st.written {
			add(st.rule.Name, id)
		}
	}
	out := map[string][]int{}
	for rule, used := range ids {
		for id := range used {
			out[rule] = append(out[rule], id)
		}
		slices.Sort(out[rule])
	}
	return out
}

// unreadable answers a request whose recording, or whose cassette, cannot
// be read (an interaction edited by hand into one a replay cannot
// serve): a 502 that names the cassette and the line, as a start-up that
// read the whole cassette would have refused to start. Nothing goes live.
func (p *Proxy) unreadable(req *http.Request, st *ruleState, err error) *http.Response {
	p.count(func(s *Stats) { s.Missed++ })
	p.log(slog.LevelError, "cassette unreadable", request(req.Method, req.URL.String(), st.rule.Name), slog.String("error", err.Error()))
	return p.text(req, http.StatusBadGateway, OutcomeMissed, "agentvcr proxy: "+err.Error()+"; fix or re-record the cassette: nothing went live\n")
}

// replay answers with a recording: its chunks as they were, paced by
// Timing, and this run's values in place of the request's old ones.
func (p *Proxy) replay(req *http.Request, st *ruleState, in *cassette.Interaction, creq *cassette.Request) *http.Response {
	body := in.Response.Body
	if strings.Contains(body, "<<") {
		body = cassette.Fill(body, st.matcher.RequestValues(creq))
	}
	contentLength := int64(-1)
	if len(in.Chunks) <= 1 {
		// Not a stream: one write, and the length up front.
		contentLength = int64(len(body))
	}
	header := in.Response.Headers.Clone()
	if header == nil {
		header = http.Header{}
	}
	if req.Method == http.MethodHead {
		// No body, and the length the recorded answer announced.
		contentLength = headLength(header)
	} else {
		header.Del("Content-Length")
	}
	closing := hasToken(header, "Connection", "close")
	header.Del("Connection")
	if closing {
		// The connection ends after this response, as it did live.
		header.Set("Connection", "close")
	}
	header.Set(Header, string(OutcomeReplayed))
	chunks := in.Chunks
	if len(body) != len(in.Response.Body) || len(chunks) == 0 {
		chunks = []cassette.Chunk{{End: len(body)}}
	}
	status := in.Response.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", in.Response.Code, http.StatusText(in.Response.Code))
	}
	return &http.Response{
		Status: status, StatusCode: in.Response.Code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, ContentLength: contentLength, Request: req, Close: closing,
		Body: &chunkReader{ctx: req.Context(), body: body, chunks: chunks, scale: p.c.timing.Scale, start: time.Now()},
	}
}

// headLength is the length a recorded answer to HEAD announced, or -1
// when it announced none.
func headLength(h http.Header) int64 {
	n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	if err != nil || n < 0 {
		h.Del("Content-Length")
		return -1
	}
	return n
}

// chunkReader serves a recorded body in its chunks: one Read, one chunk,
// each at its recorded time scaled.
type chunkReader struct {
	ctx    context.Context
	body   string
	chunks []cassette.Chunk
	scale  float64
	start  time.Time
	pos    int
	next   int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	if c.next >= len(c.chunks) {
		return 0, io.EOF
	}
	ch := c.chunks[c.next]
	if c.scale > 0 {
		// Paced: what came before goes out now, even when this chunk is
		// due already (the replay runs late, and sleep would not wait,
		// nor flush): each chunk reaches the agent when it is released,
		// not with the next one.
		flushTo(c.ctx)
		due := c.start.Add(time.Duration(float64(ch.After) * c.scale * float64(time.Millisecond)))
		if err := sleep(c.ctx, time.Until(due)); err != nil {
			return 0, err
		}
	}
	n := copy(b, c.body[c.pos:ch.End])
	c.pos += n
	if c.pos >= ch.End {
		c.next++
	}
	return n, nil
}

func (c *chunkReader) Close() error { return nil }
