package evals

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Merge puts the results of a sharded run's shards together under
// cfg.Out, as one machine that ran the whole run would have written
// them: each eval and variant's rows, failures, traces and summary
// (means and intervals over every repetition, counts, costs with unknown
// costs kept unknown), each variant's comparison with its baseline, and
// whether the run's cost ceiling held. It uses cfg's Out, Progress and
// Reporter only.
//
// dirs are the shards' results directories (each shard's Out), or
// directories that hold them at any depth, as a CI's download of every
// shard's artifact does. Merge refuses, with a *ConfigError that names
// them, results of two runs or two definitions, a shard that is missing
// (an interrupted shard's results do not count) and a shard that is
// there twice; it writes nothing then.
func Merge(ctx context.Context, cfg Config, dirs ...string) (*Report, error) {
	start := time.Now()
	if cfg.Out == "" {
		return nil, &ConfigError{Err: errors.New("no results directory: set Out (--out)")}
	}
	if len(dirs) == 0 {
		return nil, &ConfigError{Err: errors.New("no shard results to merge")}
	}
	found, interrupted, err := findShards(cfg.Out, dirs)
	if err != nil {
		return nil, err
	}
	sets, shards, err := checkShards(found, interrupted, dirs)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	// Every shard's rows are read and checked before anything is written:
	// a refused merge leaves nothing behind.
	plan, err := newPlanShape(found)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	// of are the shards' results of one set.
	of := func(s *set) []shardResult {
		return slices.DeleteFunc(slices.Clone(found), func(f shardResult) bool { return f.sum.Eval != s.name || f.sum.Variant != s.variant })
	}
	for _, s := range sets {
		for _, f := range of(s) {
			rows, err := readRows(filepath.Join(f.dir, "rows.jsonl"))
			if err != nil {
				return nil, &ConfigError{Err: err}
			}
			if err := plan.check(f, rows); err != nil {
				return nil, &ConfigError{Err: err}
			}
			s.rows = append(s.rows, rows...)
		}
		if err := uniqueAttempts(s); err != nil {
			return nil, &ConfigError{Err: err}
		}
	}
	// What the merge replaces under --out holds no shard's results.
	for _, s := range sets {
		target, err := realPath(filepath.Join(cfg.Out, s.name, s.variant))
		if err != nil {
			return nil, fmt.Errorf("evals: --out: %w", err)
		}
		for _, f := range found {
			if abs, _ := filepath.Abs(f.dir); within(abs, target) {
				return nil, &ConfigError{Err: fmt.Errorf("--out %s: the merge would replace %s, which holds the results of shard %d/%d: merge into a directory of its own", cfg.Out, target, f.sum.Shard.Index, f.sum.Shard.Of)}
			}
		}
	}
	first := found[0].sum
	r := &runner{cfg: cfg}
	r.logf("evals: merging the %d shards of run %s: %d results (an eval and a variant each)", first.Shard.Of, first.Shard.Run, len(sets))
	defer unstage(sets)
	if err := stage(sets, cfg.Out, nil); err != nil {
		return nil, err
	}
	for _, s := range sets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, f := range of(s) {
			if traces := filepath.Join(f.dir, "traces"); hasEntries(traces) {
				if err := os.CopyFS(filepath.Join(s.staging, "traces"), os.DirFS(traces)); err != nil {
					return nil, fmt.Errorf("evals: the traces of %s: %w", f.dir, err)
				}
			}
		}
	}
	rep, failedUnknown := assemble(sets, first.Reps, true)
	rep.Shards = first.Shard.Of
	var stops []string
	for _, sh := range shards {
		if sh.Stopped != "" {
			stops = append(stops, fmt.Sprintf("shard %d/%d: %s", sh.Index, sh.Of, sh.Stopped))
		}
		if c := sh.Ceiling; c != nil {
			if rep.Ceiling == nil {
				rep.Ceiling = &Ceiling{MaxUSD: c.ShareOfUSD, FailedUnknown: failedUnknown}
			}
			if rep.Ceiling.CannotHold == "" {
				rep.Ceiling.CannotHold = c.CannotHold
			}
		}
	}
	rep.Stopped = strings.Join(stops, "; ")
	if c := rep.Ceiling; c != nil {
		// The run's ceiling: a shard that stopped at its share says so
		// in Stopped.
		c.Reached = rep.PricedCostUSD >= c.MaxUSD
		c.hold(rep.PricedCostUSD)
	}
	for i := range rep.Runs {
		rep.Runs[i].Shards = rep.Shards
	}
	rep.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	if err := r.write(sets, rep); err != nil {
		return rep, err
	}
	if cfg.Reporter != nil {
		for _, s := range sets {
			for _, row := range s.rows {
				cfg.Reporter.Row(row)
			}
		}
		cfg.Reporter.Report(rep)
	}
	r.logf("evals: merged into %s", cfg.Out)
	return rep, nil
}

// maxReps and maxCases bound a run, and so what a merge believes of
// one: a summary's figures size what the merge allocates.
const (
	maxReps  = 100_000
	maxCases = 10_000_000
)

// planShape is what the shards' summaries say of the run's plan: enough
// to say which eval, variant, repetition, case and shard each attempt
// is. Every shard's summaries must say the same.
type planShape struct {
	evals    []string            // in the run's order
	variants map[string][]string // an eval's variants, in the run's order
	cases    map[string]int      // an eval's cases
	reps, of int
	// casesPerRep and perRep count a repetition's cases and attempts,
	// every eval's.
	casesPerRep, perRep int
	labels              map[string]string // an eval's case, by its place in the plan: its id
	places              map[string]string // an eval's case, by its id: its place
}

func newPlanShape(found []shardResult) (*planShape, error) {
	info := found[0].sum.Shard
	p := &planShape{variants: map[string][]string{}, cases: map[string]int{}, reps: found[0].sum.Reps, of: info.Of, labels: map[string]string{}, places: map[string]string{}}
	for _, key := range info.Sets {
		e, v, _ := strings.Cut(key, "/")
		if len(p.variants[e]) == 0 {
			p.evals = append(p.evals, e)
		}
		p.variants[e] = append(p.variants[e], v)
	}
	for _, f := range found {
		n, ok := p.cases[f.sum.Eval]
		switch {
		case f.sum.Reps != p.reps:
			return nil, fmt.Errorf("the shards' summaries disagree: %s says %d repetitions, %s %d", found[0].dir, p.reps, f.dir, f.sum.Reps)
		case ok && n != f.sum.Cases:
			return nil, fmt.Errorf("the shards' summaries disagree: %s's eval %s has %d cases, another's %d", f.dir, f.sum.Eval, f.sum.Cases, n)
		}
		p.cases[f.sum.Eval] = f.sum.Cases
	}
	for _, e := range p.evals {
		p.casesPerRep += p.cases[e]
		p.perRep += p.cases[e] * len(p.variants[e])
	}
	for _, f := range found {
		if want := p.planned(f.sum.Eval, f.sum.Shard.Index); f.sum.Attempts != want {
			return nil, fmt.Errorf("%s (shard %d/%d) says it planned %d attempts; its share of the run is %d", f.dir, f.sum.Shard.Index, p.of, f.sum.Attempts, want)
		}
		if f.sum.Started < f.sum.Attempts && f.sum.Shard.Stopped == "" {
			return nil, fmt.Errorf("%s (shard %d/%d) started %d of its %d attempts, and says nothing of why it stopped", f.dir, f.sum.Shard.Index, p.of, f.sum.Started, f.sum.Attempts)
		}
	}
	return p, nil
}

// planned counts the attempts of one of eval's variants that shard
// index makes: its cases and repetitions whose place in the plan is
// index-1 modulo the shards.
func (p *planShape) planned(eval string, index int) int {
	before := 0 // the cases of the evals before eval in a repetition
	for _, e := range p.evals {
		if e == eval {
			break
		}
		before += p.cases[e]
	}
	n := 0
	for rep := range p.reps {
		lo := rep*p.casesPerRep + before
		n += countMod(lo, lo+p.cases[eval], p.of, index-1)
	}
	return n
}

// countMod counts the g in [lo, hi) with g % n == r.
func countMod(lo, hi, n, r int) int {
	below := func(x int) int { // in [0, x)
		if x <= r {
			return 0
		}
		return (x-r-1)/n + 1
	}
	return below(hi) - below(lo)
}

// check says whether rows are those a shard's results may hold: as many
// as its summary says started, each of its eval, variant and shard, and
// each case with the one id every shard gives its place in the plan.
func (p *planShape) check(f shardResult, rows []Row) error {
	sh := f.sum.Shard
	where := fmt.Sprintf("%s (shard %d/%d)", filepath.Join(f.dir, "rows.jsonl"), sh.Index, sh.Of)
	if len(rows) != f.sum.Started {
		return fmt.Errorf("%s holds %d rows; its summary says %d attempts started", where, len(rows), f.sum.Started)
	}
	for n, row := range rows {
		a := row.Attempt - 1
		ok := a >= 0 && p.perRep > 0 && a < p.perRep*p.reps && row.Eval == f.sum.Eval && row.Variant == f.sum.Variant
		if ok {
			rep, off := a/p.perRep, a%p.perRep
			group := rep * p.casesPerRep
			for _, e := range p.evals {
				vs := p.variants[e]
				if size := p.cases[e] * len(vs); off >= size {
					off -= size
					group += p.cases[e]
					continue
				}
				ok = e == row.Eval && vs[off%len(vs)] == row.Variant && row.Rep == rep+1 && (group+off/len(vs))%p.of == sh.Index-1
				if ok {
					place := fmt.Sprintf("%s#%d", e, off/len(vs))
					if id, seen := p.labels[place]; seen && id != row.Case {
						return fmt.Errorf("%s:%d: attempt %d is of case %q; the other attempts of its place in the plan are of %q", where, n+1, row.Attempt, row.Case, id)
					}
					if at, seen := p.places[e+"/"+row.Case]; seen && at != place {
						return fmt.Errorf("%s:%d: attempt %d is of case %q, which another place in the plan holds", where, n+1, row.Attempt, row.Case)
					}
					p.labels[place], p.places[e+"/"+row.Case] = row.Case, place
				}
				break
			}
		}
		if !ok {
			return fmt.Errorf("%s:%d: attempt %d (%s/%s %s r%d) is not one of this shard's", where, n+1, row.Attempt, row.Eval, row.Variant, row.Case, row.Rep)
		}
	}
	return nil
}

// shardResult is one eval and variant's results in a shard's directory.
type shardResult struct {
	dir  string // <out>/<eval>/<variant>
	root string // the shard's <out>
	sum  Summary
}

// findShards finds the results under dirs, and the interrupted results
// beside them (by shard), leaving out what is under out.
func findShards(out string, dirs []string) ([]shardResult, map[int][]string, error) {
	outReal, err := realPath(out)
	if err != nil {
		return nil, nil, fmt.Errorf("evals: --out: %w", err)
	}
	var found []shardResult
	interrupted := map[int][]string{}
	seen := map[string]bool{} // a directory named twice, or inside another, is read once
	for _, root := range dirs {
		real, err := filepath.EvalSymlinks(root)
		if st, serr := os.Stat(real); err != nil || serr != nil || !st.IsDir() {
			return nil, nil, &ConfigError{Err: fmt.Errorf("--merge %q: not a directory of shard results", root)}
		}
		err = filepath.WalkDir(real, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				abs, err := filepath.Abs(path)
				if err != nil {
					return err
				}
				if path != real && strings.HasPrefix(d.Name(), ".") || seen[abs] {
					return filepath.SkipDir
				}
				seen[abs] = true
				return nil
			}
			if d.Name() != "summary.json" || !d.Type().IsRegular() {
				return nil
			}
			dir := filepath.Dir(path)
			var sum Summary
			if err := readJSON(path, &sum); err != nil {
				return &ConfigError{Err: fmt.Errorf("a malformed shard result: %w", err)}
			}
			switch {
			case sum.Shard == nil && sum.Shards > 0:
				return nil // a merge's own results, such as an earlier merge into --out
			case sum.Shard == nil:
				return &ConfigError{Err: fmt.Errorf("%s: not a shard's results (its run had no --shard)", dir)}
			}
			if err := sum.Shard.valid(sum); err != nil {
				return &ConfigError{Err: fmt.Errorf("%s: not a shard's results: %w", dir, err)}
			}
			shardRoot := filepath.Dir(filepath.Dir(dir))
			if abs, _ := filepath.Abs(shardRoot); within(outReal, abs) {
				return &ConfigError{Err: fmt.Errorf("--out %s is inside the results of shard %d/%d (%s): merge into a directory of its own", out, sum.Shard.Index, sum.Shard.Of, shardRoot)}
			}
			if strings.HasSuffix(dir, ".interrupted") {
				interrupted[sum.Shard.Index] = append(interrupted[sum.Shard.Index], dir)
				return nil
			}
			if err := plainTree(filepath.Join(dir, "traces")); err != nil {
				return &ConfigError{Err: err}
			}
			found = append(found, shardResult{dir: dir, root: shardRoot, sum: sum})
			return nil
		})
		if err != nil {
			if _, ok := errors.AsType[*ConfigError](err); ok {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("evals: the shard results: %w", err)
		}
	}
	if len(found) == 0 {
		return nil, nil, &ConfigError{Err: fmt.Errorf("no shard results under %s (a shard's --out holds <eval>/<variant>/summary.json)", strings.Join(dirs, ", "))}
	}
	return found, interrupted, nil
}

// realPath is path, absolute, with the links in the part of it that
// exists resolved: where a write under it lands.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), nil
		}
		if filepath.Dir(dir) == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// within says whether path is dir or under it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// plainTree says whether the traces directory dir, if there is one,
// holds files and directories only: a merge copies them, and a link or
// a pipe in a shard's results is not an attempt's trace.
func plainTree(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory (a link, a file): not a shard's traces", dir)
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return fmt.Errorf("%s is neither a file nor a directory (a link, a pipe): not an attempt's trace", path)
		}
		return nil
	})
}

// checkShards says whether found are the results of every shard of one
// run, each once, and returns the run's sets, in the run's order, and
// each shard's description.
func checkShards(found []shardResult, interrupted map[int][]string, dirs []string) ([]*set, []ShardInfo, error) {
	first := found[0]
	var errs []error
	for _, f := range found[1:] {
		a, b := first.sum.Shard, f.sum.Shard
		switch {
		case a.Run != b.Run:
			errs = append(errs, fmt.Errorf("results of two runs: %s is of run %s, %s of run %s; merge one run's shards", first.dir, a.Run, f.dir, b.Run))
		case a.Of != b.Of:
			errs = append(errs, fmt.Errorf("shards of two partitions: %s is shard %d/%d, %s shard %d/%d", first.dir, a.Index, a.Of, f.dir, b.Index, b.Of))
		case a.Definition != b.Definition || !slices.Equal(a.Sets, b.Sets):
			errs = append(errs, fmt.Errorf("shards of two definitions: %s (shard %d/%d, definition %s) and %s (shard %d/%d, definition %s) measure different things; run every shard from one commit, with the same flags", first.dir, a.Index, a.Of, a.Definition, f.dir, b.Index, b.Of, b.Definition))
		default:
			continue
		}
		break
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	info := first.sum.Shard
	roots := map[int][]string{}
	for _, f := range found {
		i := f.sum.Shard.Index
		if !slices.Contains(roots[i], f.root) {
			roots[i] = append(roots[i], f.root)
		}
	}
	shards := make([]ShardInfo, 0, info.Of)
	for i := 1; i <= info.Of; i++ {
		switch rs := roots[i]; {
		case len(rs) == 0 && len(interrupted[i]) > 0:
			errs = append(errs, fmt.Errorf("shard %d/%d is missing: %s holds only its interrupted results; run the shard again", i, info.Of, strings.Join(interrupted[i], ", ")))
		case len(rs) == 0:
			errs = append(errs, fmt.Errorf("shard %d/%d is missing: no results of it under %s", i, info.Of, strings.Join(dirs, ", ")))
		case len(rs) > 1:
			errs = append(errs, fmt.Errorf("shard %d/%d is there twice: in %s; keep one", i, info.Of, strings.Join(rs, " and ")))
		}
	}
	var sets []*set
	for _, key := range info.Sets {
		var s *set
		for i := 1; i <= info.Of; i++ {
			at := slices.IndexFunc(found, func(f shardResult) bool {
				return f.sum.Shard.Index == i && f.sum.Eval+"/"+f.sum.Variant == key
			})
			if at < 0 {
				if len(roots[i]) == 1 {
					errs = append(errs, fmt.Errorf("shard %d/%d in %s has no results of %s", i, info.Of, roots[i][0], key))
				}
				continue
			}
			sum := found[at].sum
			if s == nil {
				s = &set{name: sum.Eval, variant: sum.Variant, fingerprint: sum.Fingerprint, ncases: sum.Cases, planned: map[int]int{}}
				for rep := 1; rep <= sum.Reps; rep++ {
					s.planned[rep] = sum.Cases
				}
				for _, m := range sum.Metrics {
					s.metrics = append(s.metrics, Metric{ID: m.ID, Kind: m.Kind})
				}
			}
			if len(shards) < i {
				shards = append(shards, *sum.Shard)
			}
		}
		if s != nil {
			sets = append(sets, s)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return sets, shards, nil
}

// uniqueAttempts says whether each of s's rows is another attempt.
func uniqueAttempts(s *set) error {
	seen := map[int]bool{}
	for _, row := range s.rows {
		if seen[row.Attempt] {
			return fmt.Errorf("%s/%s: attempt %d (%s r%d) is in two shards' results", s.name, s.variant, row.Attempt, row.Case, row.Rep)
		}
		seen[row.Attempt] = true
	}
	return nil
}

func readRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("evals: %w", err)
	}
	defer f.Close()
	var rows []Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var row Row
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("evals: %s:%d: %w", path, n, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("evals: %s: %w", path, err)
	}
	return rows, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func hasEntries(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}
