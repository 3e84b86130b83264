package pgcluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// readyTimeout bounds how long Start waits for a new server to accept
	// connections. A fresh cluster is usually ready well within a second;
	// the slack is for loaded CI machines.
	readyTimeout = 30 * time.Second

	// stopTimeout bounds how long Stop waits for a fast shutdown before it
	// kills the server.
	stopTimeout = 10 * time.Second

	// portAttempts is how often Start tries a new port when another process
	// takes the free port it picked before postgres could bind it.
	portAttempts = 3
)

// errPortInUse reports that postgres could not bind its TCP port.
var errPortInUse = errors.New("port already in use")

// reaperScript stops the server and removes the cluster directory ($1) once
// its standard input reaches end of file, which happens when the process
// that started the cluster closes the pipe or dies. After a normal Stop the
// directory is already gone and the script just exits.
//
// The postmaster's PID comes from its lock file, which postgres removes when
// it exits cleanly, so a PID reused by another process is not signalled.
// SIGQUIT requests an immediate shutdown, in which the postmaster also stops
// its children. Hangups and interrupts are ignored so that the script
// survives the terminal session of the process that started it.
const reaperScript = `
trap '' HUP INT
while read -r _; do :; done
pidfile="$1/data/postmaster.pid"
if [ -f "$pidfile" ] && read -r pid < "$pidfile"; then
	kill -QUIT "$pid" 2>/dev/null
	for _ in 1 2 3 4 5; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
fi
rm -rf "$1"
`

// Cluster is a running throwaway PostgreSQL server.
//
// The server listens on a free port on 127.0.0.1 and on a Unix socket in
// its directory, trusts every local connection and has the superuser
// "postgres".
type Cluster struct {
	dir  string      // temporary directory; holds data/, the socket and the log
	cred *credential // who initdb, postgres and the reaper run as; nil means us
	port int

	// reaper is the process that cleans up should this process die without
	// calling Stop. lifeline is the write end of its standard input; keeping
	// it referenced keeps it from being closed by a finalizer.
	reaper   *exec.Cmd
	lifeline *os.File

	server  *os.Process
	exited  chan struct{} // closed once server has exited
	exitErr error         // server's exit status; valid once exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Start creates a new cluster in a temporary directory and starts its
// server. The context bounds only the startup: the server runs until Stop,
// or until the calling process exits.
//
// Start returns a *NotFoundError if the server binaries are not installed,
// and an error off Unix, where it cannot run a cluster.
// On any other failure it removes what it created and returns an error that
// ends with the last lines that initdb or the server wrote.
func Start(ctx context.Context) (*Cluster, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	// Debian installs each major version under its own directory and puts
	// none of them on $PATH; a source build installs into /usr/local/pgsql.
	bin, err := findBinDir(os.Getenv("PATH"), []string{"/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin"})
	if err != nil {
		return nil, err
	}
	return startWith(ctx, bin)
}

// startWith is Start with the server binaries in bin.
func startWith(ctx context.Context, bin string) (*Cluster, error) {
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}

	// Unix socket paths are limited to about 100 bytes, which a long $TMPDIR
	// (as on macOS) would exceed.
	base := os.TempDir()
	if len(base)+len("/agentvcr-pg-1234567890/.s.PGSQL.65535") >= 100 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "agentvcr-pg-")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	c := &Cluster{dir: dir, cred: cred}
	if err := c.start(ctx, bin); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
	}
	if err := c.startReaper(); err != nil {
		return err
	}

	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", c.dataDir(), "--no-sync", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale")
	initdb.Dir = "/"
	initdb.SysProcAttr = procAttr(c.cred, false)
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgcluster: initdb: %w\n%s", err, lastLines(out, 20))
	}

	for attempt := 1; ; attempt++ {
		err := c.startServer(ctx, filepath.Join(bin, "postgres"))
		if err == nil {
			return nil
		}
		if !errors.Is(err, errPortInUse) || attempt == portAttempts {
			log, _ := os.ReadFile(c.logFile())
			return fmt.Errorf("pgcluster: starting postgres: %w\nserver log:\n%s", err, lastLines(log, 20))
		}
	}
}

// startReaper starts the process that cleans up after us if we die.
func (c *Cluster) startReaper() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "pgcluster-reaper", c.dir)
	cmd.Stdin = r
	cmd.Dir = "/"
	// Running as the server's user limits what a forged lock file could make
	// the script kill. Its own process group keeps a Ctrl-C aimed at the
	// starting process from killing it before it has cleaned up.
	cmd.SysProcAttr = procAttr(c.cred, true)
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("pgcluster: starting reaper: %w", err)
	}
	c.reaper, c.lifeline = cmd, w
	return nil
}

// startServer starts postgres on a free port and waits until it accepts
// connections. It returns an error wrapping errPortInUse if another process
// took the port first.
func (c *Cluster) startServer(ctx context.Context, postgres string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	log, err := os.Create(c.logFile())
	if err != nil {
		return err
	}
	defer log.Close()

	cmd := exec.Command(postgres,
		"-D", c.dataDir(), "-k", c.dir, "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = log, log
	// A Ctrl-C aimed at the starting process must not stop the server
	// under it; Stop and the reaper shut it down instead.
	cmd.SysProcAttr = procAttr(c.cred, true)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	c.port, c.server, c.exited = port, cmd.Process, exited
	go func() {
		c.exitErr = cmd.Wait()
		close(exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		err := ping(ctx, c.URL("postgres"))
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			if logged, _ := os.ReadFile(c.logFile()); bytes.Contains(logged, []byte("Address already in use")) {
				return fmt.Errorf("postgres exited (%w): %w", errPortInUse, c.exitErr)
			}
			return fmt.Errorf("postgres exited: %w", c.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("waiting for postgres to accept connections: %w (last attempt: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func ping(ctx context.Context, url string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.Ping(ctx)
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *Cluster) logFile() string { return filepath.Join(c.dir, "postgres.log") }

// URL returns the URL of the named database, for connecting over TCP as
// the superuser.
func (c *Cluster) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// CreateDatabase creates an empty database with a new name and returns its
// URL. Users that share a cluster, such as the tests of one binary, can each
// use their own database without seeing one another's tables.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	name, err := CreateDatabase(ctx, c.URL("postgres"))
	if err != nil {
		return "", err
	}
	return c.URL(name), nil
}

// Stop shuts the server down and removes its directory. It asks for a fast
// shutdown, which disconnects clients, and kills the server if that takes
// too long. Stop may be called more than once, also concurrently; every
// call returns the result of the first.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var errs []error
	if c.server != nil {
		errs = append(errs, c.shutdown())
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, fmt.Errorf("pgcluster: %w", err))
	}
	// With the directory gone, end of input makes the reaper exit without
	// doing anything.
	if c.lifeline != nil {
		c.lifeline.Close()
		if err := c.reaper.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("pgcluster: reaper: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (c *Cluster) shutdown() error {
	// SIGINT requests a fast shutdown. The error only says that the server
	// has exited already, which the select below sees too.
	_ = c.server.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		return nil
	case <-time.After(stopTimeout):
	}
	_ = c.server.Kill()
	<-c.exited
	return fmt.Errorf("pgcluster: postgres did not shut down within %v and was killed", stopTimeout)
}

// CreateDatabase creates an empty database with a new name on the server
// at adminURL, which may be that of any database there, and returns the
// name. Unlike [Cluster.CreateDatabase] it works with any server, including
// one this package did not start. The name is random rather than counted so
// that processes sharing a server do not collide.
func CreateDatabase(ctx context.Context, adminURL string) (string, error) {
	name := "agentvcr_" + strings.ToLower(rand.Text())
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("pgcluster: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgcluster: creating database %s: %w", name, err)
	}
	return name, nil
}

// madeName matches the names CreateDatabase gives.
var madeName = regexp.MustCompile(`^agentvcr_[a-z2-7]{26}$`)

// Made says whether name is one CreateDatabase gives: code that drops
// databases it finds listed somewhere drops no other.
func Made(name string) bool { return madeName.MatchString(name) }

// DropDatabase drops the named database on the server at adminURL. It
// disconnects sessions still using the database, such as those of a pool
// nobody closed, and succeeds if the database does not exist.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgcluster: dropping database %s: %w", name, err)
	}
	return nil
}

// lastLines returns at most the last n lines of b.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
