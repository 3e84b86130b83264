package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// cassetteWriter writes cassettes off the request path. A recording marks
// its rule's cassette dirty and returns; one goroutine, started when there
// is work and gone when there is none, merges what each dirty cassette's
// rule recorded into its file (cassette.Merge: other proxies may be
// writing it too). Recordings that come while a cassette is being written
// are written together next, so the cost of a recording to the agent does
// not grow with its cassette, and no request waits for a disk.
//
// Between writes the writer rests four times as long as the last took, so
// that writing a large cassette again and again takes at most a fifth of a
// core from the requests; a flush ends the rest.
type cassetteWriter struct {
	p        *Proxy
	mu       sync.Mutex
	idle     *sync.Cond
	pending  map[*ruleState]bool
	running  bool
	flushing int           // flushes waiting
	wake     chan struct{} // ends a rest
	err      error         // the first write error since the last flush

	// Touched by the writing goroutine only, by rule: the ids its
	// merges gave this proxy's recordings, and in mode record, what
	// they replace.
	own     map[*ruleState]map[int]bool
	replace map[*ruleState]map[int]*cassette.Interaction
}

func newCassetteWriter(p *Proxy) *cassetteWriter {
	w := &cassetteWriter{p: p, pending: map[*ruleState]bool{}, wake: make(chan struct{}, 1),
		own: map[*ruleState]map[int]bool{}, replace: map[*ruleState]map[int]*cassette.Interaction{}}
	w.idle = sync.NewCond(&w.mu)
	return w
}

// mark asks for a rule's cassette to be written.
func (w *cassetteWriter) mark(st *ruleState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[st] = true
	if !w.running {
		w.running = true
		go w.run()
	}
}

func (w *cassetteWriter) run() {
	var rest time.Duration
	for {
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.running = false
			w.idle.Broadcast()
			w.mu.Unlock()
			return
		}
		if rest > 0 && w.flushing == 0 {
			w.mu.Unlock()
			t := time.NewTimer(rest)
			select {
			case <-t.C:
			case <-w.wake:
				t.Stop()
			}
			w.mu.Lock()
		}
		batch := w.pending
		w.pending = map[*ruleState]bool{}
		w.mu.Unlock()
		start := time.Now()
		for st := range batch {
			if err := w.write(st); err != nil {
				w.p.log(slog.LevelError, "not written", slog.String("error", err.Error()))
				w.mu.Lock()
				if w.err == nil {
					w.err = err
				}
				w.mu.Unlock()
			}
		}
		rest = 4 * time.Since(start)
	}
}

// write merges into a rule's cassette what the rule recorded since the
// last write: recordings are prepared, and never changed once recorded,
// so taking the list under the proxy's lock is all the lock is held for.
// What fails to be written is put back, to be tried again with the next.
//
// In mode record, a recording replaces those of the same request that
// the cassette held when the proxy started; another proxy's recordings of
// it, made since, stay.
func (w *cassetteWriter) write(st *ruleState) error {
	p := w.p
	p.mu.Lock()
	batch := st.unwritten
	st.unwritten = nil
	p.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if w.own[st] == nil {
		w.own[st], w.replace[st] = map[int]bool{}, map[int]*cassette.Interaction{}
	}
	o := cassette.MergeOptions{Own: w.own[st]}
	if st.mode(p.c.mode) == ModeRecord {
		for _, in := range batch {
			for _, old := range st.base[in.Key] {
				w.replace[st][old.ID] = old
			}
		}
		o.Replace = w.replace[st]
	}
	err := os.MkdirAll(p.c.dir, 0o700)
	var ids []int
	if err == nil {
		ids, err = cassette.Merge(st.path, batch, o)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		st.unwritten = append(batch, st.unwritten...)
		return fmt.Errorf("rule %s: %w", st.rule.Name, err)
	}
	for i, in := range batch {
		st.written[in] = ids[i]
		w.own[st][ids[i]] = true
	}
	return nil
}

// flush waits until every cassette marked so far is written, and returns
// the write errors since the last flush.
func (w *cassetteWriter) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushing++
	defer func() { w.flushing-- }()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	for w.running {
		w.idle.Wait()
	}
	err := w.err
	w.err = nil
	return err
}

// Flush waits until every recording made so far is written to its
// cassette, and returns what failed. Recordings are written in the
// background; call Flush before reading cassettes or exiting. What a
// write failed to write (another process held the cassette's lock too
// long) is tried again.
func (p *Proxy) Flush() error {
	if err := p.init(); err != nil {
		return err
	}
	p.mu.Lock()
	for _, st := range p.rules {
		if len(st.unwritten) > 0 {
			p.writer.mark(st)
		}
	}
	p.mu.Unlock()
	if err := p.writer.flush(); err != nil {
		return errors.Join(errors.New("proxy: a cassette was not written"), err)
	}
	return nil
}
