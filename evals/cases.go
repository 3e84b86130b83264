package evals

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Case is one line of an eval's cases file: an id, the input, and what
// setup and the grader read.
type Case struct {
	// ID names the case in rows, traces and messages: letters, digits,
	// '.', '_' and '-', unique in its file.
	ID string `json:"id"`
	// Input is what the case asks: a JSON string (Text) or any JSON
	// value Input reads with Decode.
	Input json.RawMessage `json:"input"`
	// Expected, Seed and Tags are the case's own, for Setup and Grade.
	Expected json.RawMessage `json:"expected,omitempty"`
	Seed     int64           `json:"seed,omitempty"`
	Tags     []string        `json:"tags,omitempty"`
	// File and Line say where the case was read.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Text is the input when it is a JSON string, else "".
func (c Case) Text() string {
	var s string
	if json.Unmarshal(c.Input, &s) != nil {
		return ""
	}
	return s
}

// ExpectedText is Expected when it is a JSON string, else "".
func (c Case) ExpectedText() string {
	var s string
	if json.Unmarshal(c.Expected, &s) != nil {
		return ""
	}
	return s
}

// HasTag says whether the case carries tag.
func (c Case) HasTag(tag string) bool { return slices.Contains(c.Tags, tag) }

// Cases loads an eval's cases.
type Cases func() ([]Case, error)

// FromJSONL reads cases from a file of one JSON object per line (blank
// lines are skipped). A line that is not a case is an error naming the
// file and the line: not JSON, a key a case does not have, no id or no
// input, an id used before.
func FromJSONL(path string) Cases {
	return func() ([]Case, error) {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(path) {
			return nil, fmt.Errorf("cases: %w (the path is relative to the working directory: run the program from its module's root, or embed the file and read it with FromFS)", err)
		}
		if err != nil {
			return nil, fmt.Errorf("cases: %w", err)
		}
		defer f.Close()
		return readCases(path, f)
	}
}

// FromFS is FromJSONL on a file of fsys, such as an embed.FS, so that a
// binary carries its cases.
func FromFS(fsys fs.FS, path string) Cases {
	return func() ([]Case, error) {
		f, err := fsys.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cases: %w", err)
		}
		defer f.Close()
		return readCases(path, f)
	}
}

// CaseError is a line of a cases file that is not a case.
type CaseError struct {
	File string
	Line int
	Err  error
}

func (e *CaseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *CaseError) Unwrap() error { return e.Err }

// maxCaseLine bounds a line of a cases file.
const maxCaseLine = 16 << 20

func readCases(name string, r io.Reader) ([]Case, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxCaseLine)
	var cases []Case
	first := map[string]int{}
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff")) // a byte order mark
		}
		if len(line) == 0 {
			continue
		}
		c, err := parseCase(line)
		if err == nil {
			if at, dup := first[c.ID]; dup {
				err = fmt.Errorf("id %q is that of line %d too; ids are unique", c.ID, at)
			}
		}
		if err != nil {
			return nil, &CaseError{File: name, Line: n, Err: err}
		}
		c.File, c.Line = name, n
		first[c.ID] = n
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &CaseError{File: name, Line: n + 1, Err: fmt.Errorf("the line is over %d MiB", maxCaseLine>>20)}
		}
		return nil, fmt.Errorf("cases: %s: %w", name, err)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("cases: %s holds no case", name)
	}
	return cases, nil
}

// caseKeys are the keys a case has, as written: encoding/json would
// take "ID" and "Expected" for them too.
var caseKeys = []string{"id", "input", "expected", "seed", "tags"}

func parseCase(line []byte) (Case, error) {
	var c Case
	if err := keysOf(line); err != nil {
		return c, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var syntax *json.SyntaxError
		switch {
		case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
			return c, fmt.Errorf("not JSON: %v", err)
		case strings.HasPrefix(err.Error(), "json: unknown field"):
			return c, fmt.Errorf("%v; a case has id, input, expected, seed and tags", strings.TrimPrefix(err.Error(), "json: "))
		default:
			return c, fmt.Errorf("not a case: %v", strings.TrimPrefix(err.Error(), "json: "))
		}
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return c, fmt.Errorf("more after the case: %.20q", rest)
	}
	switch {
	case c.ID == "":
		return c, errors.New(`no "id"`)
	case string(c.Input) == `""`:
		return c, errors.New(`"input" is empty`)
	case !namePattern.MatchString(c.ID):
		// An id names the attempt's trace directory and its lines.
		return c, fmt.Errorf("id %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", c.ID)
	case len(c.Input) == 0 || string(c.Input) == "null":
		return c, errors.New(`no "input"`)
	}
	return c, nil
}

// keysOf checks the keys of a case's object as written: each one of
// caseKeys, once. A line that is not an object is left to the decoder.
func keysOf(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		switch {
		case !slices.Contains(caseKeys, key):
			return fmt.Errorf("unknown field %q; a case has id, input, expected, seed and tags", key)
		case seen[key]:
			return fmt.Errorf("field %q twice", key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// subset returns n of cases (all when n is 0 or more than there are),
// chosen by a digest of each id: the same n cases in every run, however
// the file is ordered, and adding a case changes the subset only by the
// new case, if it ranks in. They keep the file's order.
func subset(cases []Case, n int) []Case {
	if n <= 0 || n >= len(cases) {
		return cases
	}
	rank := func(c Case) [32]byte { return sha256.Sum256([]byte(c.ID)) }
	ranked := slices.Clone(cases)
	slices.SortFunc(ranked, func(a, b Case) int {
		ra, rb := rank(a), rank(b)
		return bytes.Compare(ra[:], rb[:])
	})
	keep := map[string]bool{}
	for _, c := range ranked[:n] {
		keep[c.ID] = true
	}
	return slices.DeleteFunc(slices.Clone(cases), func(c Case) bool { return !keep[c.ID] })
}
