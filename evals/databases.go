package evals

import (
	"context"
	"net/url"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/internal/pgtest"
)

// databases makes the attempts' databases ahead of them, so that an
// attempt does not wait for CREATE DATABASE (the larger part of what a
// fresh attempt costs), and drops them after it, so that it does not
// wait for DROP DATABASE either.
type databases struct {
	ready   chan database
	stop    chan struct{}
	made    sync.WaitGroup // the maker
	dropped sync.WaitGroup // the drops under way
	logf    func(format string, args ...any)
}

// database is an attempt's database, or why it could not be made.
type database struct {
	url  string
	drop func() error
	err  error
}

// newDatabases makes n databases on server ("": the test cluster),
// ahead at most ahead of those taken, and tells note each one's name
// as it is made.
func newDatabases(server string, n, ahead int, note func(name string), logf func(string, ...any)) *databases {
	d := &databases{ready: make(chan database, ahead), stop: make(chan struct{}), logf: logf}
	d.made.Go(func() {
		defer close(d.ready)
		for range n {
			var db database
			db.url, db.drop, db.err = pgtest.DatabaseOn(context.Background(), server)
			if db.err == nil {
				if u, err := url.Parse(db.url); err == nil {
					note(strings.TrimPrefix(u.Path, "/"))
				}
			}
			select {
			case d.ready <- db:
			case <-d.stop:
				d.release(db)
				return
			}
		}
	})
	return d
}

// take is the next attempt's database: it waits for it to be made.
func (d *databases) take() database {
	db, ok := <-d.ready
	if !ok {
		// More attempts than databases: Run plans one for each.
		panic("evals: no database left for an attempt")
	}
	return db
}

// release drops db, in the background; the zero database (an attempt
// that took none) is none to drop.
func (d *databases) release(db database) {
	if db.drop == nil {
		return
	}
	d.dropped.Go(func() {
		if err := db.drop(); err != nil {
			d.logf("evals: an attempt's database: %v", err)
		}
	})
}

// close stops making databases, drops those made and not taken, and
// waits for every drop.
func (d *databases) close() {
	close(d.stop)
	d.made.Wait()
	for db := range d.ready {
		d.release(db)
	}
	d.dropped.Wait()
}
