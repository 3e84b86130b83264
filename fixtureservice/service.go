package fixtureservice

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/control"
	"github.com/agentvcr/agentvcr/fixture"
	"github.com/agentvcr/agentvcr/internal/pgcluster"
)

//go:embed openapi.json
var openAPI []byte

// MaxBody is the largest request body the service reads: specs, inputs
// and history items are small (a recorded history goes by its path).
const MaxBody = 8 << 20

// doc is where the API is described for people.
const doc = "docs/typescript.md#fixture-the-go-fixture-from-typescript"

// startTimeout is how long an attached app may take to start: the time
// between the service handing the client the app's environment and the
// client answering with its URL.
const startTimeout = 2 * time.Minute

// Options configure a Service.
type Options struct {
	// DatabaseServer is the PostgreSQL server each fixture's database is
	// made on (a postgres:// URL of a user allowed to create databases).
	// Empty, the service starts a throwaway cluster of its own on first
	// need (PostgreSQL's server binaries must be installed) and stops it
	// at Close.
	DatabaseServer string
}

// Service hosts fixtures over HTTP. It is an http.Handler; Close deletes
// the fixtures left and stops what it started.
type Service struct {
	token string
	opts  Options
	mux   *http.ServeMux

	mu       sync.Mutex
	fixtures map[string]*entry
	starts   map[string]*start
	calls    map[string]*callState
	next     int
	closed   bool
	done     chan struct{} // closed by Close

	dbOnce   sync.Once
	cluster  *pgcluster.Cluster // guarded by mu
	dbServer string
	dbErr    error
}

// New returns a service whose every call needs "Authorization: Bearer
// token"; an empty token refuses every call.
func New(token string, opts Options) *Service {
	s := &Service{token: token, opts: opts, fixtures: map[string]*entry{}, starts: map[string]*start{},
		calls: map[string]*callState{}, done: make(chan struct{})}
	s.routes()
	return s
}

// NewToken returns a random bearer token.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// entry is a served fixture: one New, or one Agent of another.
type entry struct {
	id     string
	t      *fixtureT
	parent *entry // the fixture Agent made this one from
	app    appSpec

	mu      sync.Mutex
	f       *fixture.Fixture // nil until it has started
	convs   *conversations   // shared with the fixture's agents
	control http.Handler
	op      *operation // the start-up under way, for App.Start; nil when none
}

// conversations are a fixture's Conversations by id, the latest of each:
// what continue, fork and watches name. A fixture and its agents share
// them, as the Go fixture's instances share their conversations.
type conversations struct {
	mu sync.Mutex
	m  map[string]*fixture.Conversation
}

func (cs *conversations) get(id string) *fixture.Conversation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[id]
}

func (cs *conversations) put(c *fixture.Conversation) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.m[c.ID] = c
}

// operation is a start-up of an app (New or Agent) while it runs: an
// attached app's Start hands its start to it.
type operation struct {
	started chan *start
	done    chan outcome
	entry   *entry // the fixture it starts
}

// start is an attached app waiting for the client to start it.
type start struct {
	id     string
	env    map[string]string
	answer chan startAnswer
	op     *operation
}

type startAnswer struct {
	URL   string `json:"url"`
	Error string `json:"error"`
}

func (s *Service) id(prefix string) string {
	s.next++
	return fmt.Sprintf("%s%d", prefix, s.next)
}

func (s *Service) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	mux.HandleFunc("POST /v1/fixtures", s.create)
	mux.HandleFunc("GET /v1/fixtures/{id}", s.withFixture(s.get))
	mux.HandleFunc("DELETE /v1/fixtures/{id}", s.delete)
	mux.HandleFunc("POST /v1/fixtures/{id}/agents", s.withFixture(s.agent))
	mux.HandleFunc("POST /v1/starts/{id}", s.attach)
	mux.HandleFunc("POST /v1/fixtures/{id}/run", s.withFixture(s.run))
	mux.HandleFunc("POST /v1/fixtures/{id}/continue", s.withFixture(s.continue_))
	mux.HandleFunc("POST /v1/fixtures/{id}/fork", s.withFixture(s.fork))
	mux.HandleFunc("POST /v1/calls/{id}/progress/{n}", s.ack)
	mux.HandleFunc("POST /v1/calls/{id}/send", s.send)
	mux.HandleFunc("POST /v1/fixtures/{id}/scheduled-automations", s.withFixture(s.insertScheduledAutomation))
	mux.HandleFunc("POST /v1/fixtures/{id}/event-automations", s.withFixture(s.insertEventAutomation))
	mux.HandleFunc("POST /v1/fixtures/{id}/watches", s.withFixture(s.insertWatch))
	mux.HandleFunc("POST /v1/fixtures/{id}/memories", s.withFixture(s.insertMemory))
	mux.HandleFunc("POST /v1/fixtures/{id}/credentials", s.withFixture(s.insertCredential))
	mux.HandleFunc("POST /v1/fixtures/{id}/faults", s.withFixture(s.fault))
	mux.HandleFunc("/v1/fixtures/{id}/control/", s.withFixture(func(w http.ResponseWriter, r *http.Request, e *entry) {
		http.StripPrefix("/v1/fixtures/"+e.id+"/control", e.control).ServeHTTP(w, r)
	}))
	s.mux = mux
}

// ServeHTTP checks that the call comes from loopback, to a loopback
// host, with the token, and serves it.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || !net.ParseIP(host).IsLoopback() {
		writeError(w, http.StatusForbidden, "the fixture service answers loopback only")
		return
	}
	// A page a browser loaded from elsewhere may reach loopback through
	// a name that resolves there (DNS rebinding): the Host says so.
	if host := hostOnly(r.Host); host != "localhost" && !isLoopbackIP(host) {
		writeError(w, http.StatusForbidden, "the fixture service answers requests to a loopback host only, not "+r.Host)
		return
	}
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if s.token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
		writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
		return
	}
	if r.ContentLength > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("a body is at most %d bytes", MaxBody))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	if _, pattern := s.mux.Handler(r); pattern == "" {
		writeError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path+"; see "+doc+" (or GET /v1/openapi.json)")
		return
	}
	s.mux.ServeHTTP(w, r)
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackIP(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.IsLoopback()
}

// databaseServer is the server fixtures make their databases on.
func (s *Service) databaseServer() (string, error) {
	if s.opts.DatabaseServer != "" {
		return s.opts.DatabaseServer, nil
	}
	s.dbOnce.Do(func() {
		c, err := pgcluster.Start(context.Background())
		if err != nil {
			s.dbErr = fmt.Errorf("start a PostgreSQL cluster for the fixtures' databases: %w (or pass --database-server)", err)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			// Close has passed: it would not stop this one.
			c.Stop()
			s.dbErr = errors.New("the service is closing")
			return
		}
		s.cluster, s.dbServer = c, c.URL("postgres")
	})
	return s.dbServer, s.dbErr
}

// Close deletes every fixture left, as their clients would have, and
// stops the database cluster the service started.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	var roots []*entry
	for _, e := range s.fixtures {
		if e.parent == nil {
			roots = append(roots, e)
		}
	}
	s.fixtures = map[string]*entry{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range roots {
		wg.Go(func() { e.t.cleanup() })
	}
	wg.Wait()
	s.mu.Lock()
	cluster := s.cluster
	s.mu.Unlock()
	if cluster != nil {
		return cluster.Stop()
	}
	return nil
}

func (s *Service) withFixture(h func(http.ResponseWriter, *http.Request, *entry)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		e := s.fixtures[r.PathValue("id")]
		s.mu.Unlock()
		if e == nil {
			writeError(w, http.StatusNotFound, "no fixture "+r.PathValue("id")+": it was deleted, or never made")
			return
		}
		e.mu.Lock()
		ready := e.f != nil
		e.mu.Unlock()
		if !ready {
			writeError(w, http.StatusConflict, "fixture "+e.id+" has not started yet: its app waits to be attached (POST /v1/starts/{id})")
			return
		}
		h(w, r, e)
	}
}

// create is POST /v1/fixtures.
func (s *Service) create(w http.ResponseWriter, r *http.Request) {
	var spec fixtureSpec
	if !decode(w, r, &spec) {
		return
	}
	if spec.Name == "" {
		writeError(w, http.StatusBadRequest, "name: the test's name, for reports and messages")
		return
	}
	app, err := spec.App.app()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	opts, err := spec.options()
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	db, err := s.databaseServer()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	opts = append(opts, fixture.DatabaseServer(db))
	t, err := newFixtureT(spec.Name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "the service is closing")
		return
	}
	e := &entry{id: s.id("f"), t: t, app: spec.App, convs: &conversations{m: map[string]*fixture.Conversation{}}}
	s.fixtures[e.id] = e
	s.mu.Unlock()
	if spec.App.Attach {
		app.Start = s.attached(e)
	}
	s.startUp(w, e, e, func() *fixture.Fixture { return fixture.New(t, app, opts...) }, http.StatusCreated)
}

// agent is POST /v1/fixtures/{id}/agents: another instance of the app,
// with other agent options.
func (s *Service) agent(w http.ResponseWriter, r *http.Request, parent *entry) {
	var spec agentOptionsSpec
	if !decode(w, r, &spec) {
		return
	}
	root := parent
	for root.parent != nil {
		root = root.parent
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "the service is closing")
		return
	}
	e := &entry{id: s.id("f"), t: parent.t, parent: root, app: parent.app, convs: parent.convs}
	s.fixtures[e.id] = e
	s.mu.Unlock()
	// An Agent's instance starts as its fixture's app does: an attached
	// app's Start is the root fixture's, which hands the start to the
	// start-up under way there.
	parent.mu.Lock()
	pf := parent.f
	parent.mu.Unlock()
	if !s.startUp(w, root, e, func() *fixture.Fixture { return pf.Agent(spec.options()) }, http.StatusCreated) {
		s.forget(e)
		writeError(w, http.StatusConflict, "fixture "+root.id+" is starting another instance of its app: start one at a time")
	}
}

func (e *entry) currentOp() *operation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.op
}

// startUp runs a start-up (New or Agent) of e and answers when it is
// done, or when an attached app's Start hands the client its
// environment: the client then starts its app and answers
// POST /v1/starts/{id}, whose answer is the start-up's. holder is the
// fixture whose App.Start runs (e's root); it runs one start-up at a
// time, and startUp says false, having done nothing, while another is
// under way.
func (s *Service) startUp(w http.ResponseWriter, holder, e *entry, up func() *fixture.Fixture, status int) bool {
	op := &operation{started: make(chan *start, 1), done: make(chan outcome, 1), entry: e}
	holder.mu.Lock()
	if holder.op != nil {
		holder.mu.Unlock()
		return false
	}
	holder.op = op
	holder.mu.Unlock()
	go func() {
		var f *fixture.Fixture
		o := e.t.do(func() { f = up() })
		holder.mu.Lock()
		holder.op = nil
		holder.mu.Unlock()
		if o.returned {
			s.ready(e, f)
		} else {
			s.forget(e)
		}
		op.done <- o
	}()
	select {
	case st := <-op.started:
		writeJSON(w, status, map[string]any{"id": e.id, "start": map[string]any{"id": st.id, "env": st.env}})
	case o := <-op.done:
		s.answerStartUp(w, e, o, status)
	}
	return true
}

// ready makes a started fixture's calls available.
func (s *Service) ready(e *entry, f *fixture.Fixture) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.f = f
	e.control = control.New(s.token, f.Proxy(), f.Slack(), f.Model())
}

// forget drops a fixture whose start-up failed; a New's cleanups run
// (what it had started stops), an Agent's are its parent's.
func (s *Service) forget(e *entry) {
	s.mu.Lock()
	delete(s.fixtures, e.id)
	s.mu.Unlock()
}

func (s *Service) answerStartUp(w http.ResponseWriter, e *entry, o outcome, status int) {
	if !o.returned {
		failures := o.failures
		if e.parent == nil {
			rest, _ := e.t.cleanup()
			failures = append(failures, rest...)
		}
		writeFailure(w, http.StatusUnprocessableEntity, "fixture "+e.id+" did not start", failures, o.timeout)
		return
	}
	writeJSON(w, status, map[string]any{"id": e.id, "appUrl": e.f.AppURL(), "failures": nonNil(o.failures)})
}

// attached is the App.Start of an app the client starts itself.
func (s *Service) attached(e *entry) func(ctx context.Context, env map[string]string) (string, func(), error) {
	return func(ctx context.Context, env map[string]string) (string, func(), error) {
		op := e.currentOp()
		s.mu.Lock()
		st := &start{id: s.id("s"), env: env, answer: make(chan startAnswer, 1), op: op}
		s.starts[st.id] = st
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.starts, st.id)
			s.mu.Unlock()
		}()
		op.started <- st
		timer := time.NewTimer(startTimeout)
		defer timer.Stop()
		select {
		case a := <-st.answer:
			if a.Error != "" {
				return "", nil, fmt.Errorf("the client could not start it: %s", a.Error)
			}
			return a.URL, nil, nil
		case <-timer.C:
			return "", nil, fmt.Errorf("the client did not attach it within %s of being given its environment (POST /v1/starts/%s)", startTimeout, st.id)
		case <-s.done:
			return "", nil, errors.New("the service closed")
		}
	}
}

// attach is POST /v1/starts/{id}: the client's app is up (or not).
func (s *Service) attach(w http.ResponseWriter, r *http.Request) {
	var a startAnswer
	if !decode(w, r, &a) {
		return
	}
	s.mu.Lock()
	st := s.starts[r.PathValue("id")]
	s.mu.Unlock()
	if st == nil {
		writeError(w, http.StatusNotFound, "no start "+r.PathValue("id")+" waits: it was answered, or timed out")
		return
	}
	if a.Error == "" {
		if err := loopbackURL(a.URL); err != nil {
			a.Error = err.Error()
		}
	}
	st.answer <- a
	o := <-st.op.done
	s.answerStartUp(w, st.op.entry, o, http.StatusOK)
}

// loopbackURL checks that an attached app serves on loopback: the
// fixture sends it signed inputs and the admin bearer.
func loopbackURL(raw string) error {
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return fmt.Errorf("url %q: the app's base URL, such as http://127.0.0.1:3000", raw)
	}
	host := hostOnly(strings.SplitN(strings.SplitN(raw, "://", 2)[1], "/", 2)[0])
	if host != "localhost" && !isLoopbackIP(host) {
		return fmt.Errorf("url %q: an attached app serves on loopback", raw)
	}
	return nil
}

// get is GET /v1/fixtures/{id}.
func (s *Service) get(w http.ResponseWriter, _ *http.Request, e *entry) {
	writeJSON(w, http.StatusOK, map[string]any{"id": e.id, "appUrl": e.f.AppURL(), "modelRequests": nonNil(e.f.ModelRequests())})
}

// delete is DELETE /v1/fixtures/{id}: the fixture's cleanups run (its
// apps stop, its recordings and reports are written, its database is
// dropped) and its failures not yet told are the answer, with what it
// logged (an app's output, when the fixture failed).
func (s *Service) delete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	e := s.fixtures[r.PathValue("id")]
	if e != nil && e.parent != nil {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, "fixture "+e.id+" is an agent of "+e.parent.id+": it ends with that one")
		return
	}
	if e != nil {
		for id, x := range s.fixtures {
			if x == e || x.parent == e {
				delete(s.fixtures, id)
			}
		}
	}
	s.mu.Unlock()
	if e == nil {
		writeError(w, http.StatusNotFound, "no fixture "+r.PathValue("id")+": it was deleted, or never made")
		return
	}
	failures, logs := e.t.cleanup()
	writeJSON(w, http.StatusOK, map[string]any{"failures": nonNil(failures), "logs": nonNil(logs)})
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the body: "+err.Error()+"; see "+doc)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": msg})
}

// writeFailure answers a fixture's failure: what failed, each failure,
// and whether it was a call's timeout.
func writeFailure(w http.ResponseWriter, status int, msg string, failures []string, timeout bool) {
	writeJSON(w, status, failure(msg, failures, timeout))
}

func failure(msg string, failures []string, timeout bool) map[string]any {
	if len(failures) > 0 {
		msg += ": " + failures[len(failures)-1]
	}
	return map[string]any{"error": msg, "failures": nonNil(failures), "timeout": timeout}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
