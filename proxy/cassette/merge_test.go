package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"

	"github.com/agentvcr/agentvcr/internal/filelock"
)

// recording is a prepared interaction for GET url answered with body,
// keyed as a proxy keys it.
func recording(t testing.TB, url, body string) *Interaction {
	in := &Interaction{Request: req("GET", "https://api.example.com"+url, ""), Rule: "web",
		Response: Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"text/plain"}}, Body: body}}
	if err := Prepare(in); err != nil {
		t.Fatal(err)
	}
	in.Key = (&Matcher{}).Key(&in.Request)
	return in
}

// mergeWriter is one of many writers of a cassette: merges times, it
// merges a request of its own and one that every writer makes, answered
// with its number and the merge's, as a recording proxy would.
func mergeWriter(t testing.TB, name string, writer, merges int) error {
	own := map[int]bool{}
	for j := range merges {
		add := []*Interaction{
			recording(t, fmt.Sprintf("/w%d/r%d", writer, j), fmt.Sprintf("w%d r%d", writer, j)),
			recording(t, "/shared", fmt.Sprintf("w%d #%d", writer, j)),
		}
		ids, err := Merge(name, add, MergeOptions{Own: own})
		if err != nil {
			return fmt.Errorf("writer %d, merge %d: %w", writer, j, err)
		}
		for _, id := range ids {
			own[id] = true
		}
	}
	return nil
}

const mergeWriterEnv = "AGENTVCR_MERGE_WRITER" // file,writer,merges

// TestMergeWriterHelper is a writer process of TestMergeKeepsEveryWriters.
func TestMergeWriterHelper(t *testing.T) {
	args := strings.Split(os.Getenv(mergeWriterEnv), ",")
	if len(args) != 3 {
		return // not a test of its own
	}
	writer, _ := strconv.Atoi(args[1])
	merges, _ := strconv.Atoi(args[2])
	if err := mergeWriter(t, args[0], writer, merges); err != nil {
		t.Fatal(err)
	}
}

// TestMergeKeepsEveryWriters has writers, goroutines and then processes,
// merge into one cassette at once: every recording is in it once, with
// an id of its own, and each writer's recordings of the request they all
// make are together, in the order it made them.
func TestMergeKeepsEveryWriters(t *testing.T) {
	const writers, merges = 8, 12
	tests := []struct {
		name string
		run  func(t *testing.T, name string, writer int) error
	}{
		{"goroutines", func(t *testing.T, name string, writer int) error { return mergeWriter(t, name, writer, merges) }},
		{"processes", func(t *testing.T, name string, writer int) error {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMergeWriterHelper$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%d", mergeWriterEnv, name, writer, merges))
			cmd.WaitDelay = 10 * time.Second
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("writer %d: %v\n%s", writer, err, out)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "web.yaml")
			errs := make(chan error, writers)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() { errs <- tt.run(t, name, w) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			c, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[int]bool{}
			bodies := map[string]bool{}
			var shared []string
			for _, in := range c.Interactions {
				if ids[in.ID] || bodies[in.Response.Body] {
					t.Fatalf("id %d or body %q is in the cassette twice", in.ID, in.Response.Body)
				}
				ids[in.ID], bodies[in.Response.Body] = true, true
				if strings.HasSuffix(in.Request.URL, "/shared") {
					shared = append(shared, in.Response.Body)
				}
			}
			if len(c.Interactions) != writers*merges*2 {
				t.Fatalf("the cassette holds %d recordings; want %d", len(c.Interactions), writers*merges*2)
			}
			// The shared request's recordings: one writer's, then
			// another's, each in its order.
			for w := range writers {
				first := slices.Index(shared, fmt.Sprintf("w%d #0", w))
				for j := range merges {
					if first < 0 || first+j >= len(shared) || shared[first+j] != fmt.Sprintf("w%d #%d", w, j) {
						t.Fatalf("writer %d's recordings of the shared request are not together and in order:\n%s", w, strings.Join(shared, "\n"))
					}
				}
			}
			if _, err := vcr.Load(strings.TrimSuffix(name, ".yaml")); err != nil {
				t.Fatalf("go-vcr cannot read the merged cassette: %v", err)
			}
			for _, f := range []string{name, lockName(name)} {
				if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v; want mode 0600", f, info, err)
				}
			}
		})
	}
}

// TestMergePlacesAndNumbers merges into cassettes in Write's layout,
// which Merge splices by their bytes, and in another, which it decodes
// and encodes whole: both give the same cassette, the first in Write's
// layout with the bytes that were there kept.
func TestMergePlacesAndNumbers(t *testing.T) {
	a0, b1, a7 := recording(t, "/a", "a0"), recording(t, "/b", "b1"), recording(t, "/a", "a7")
	a0.ID, b1.ID, a7.ID = 0, 1, 7
	edited := *a0
	edited.Response.Body = "a0, edited by hand"
	tests := []struct {
		name string
		have []*Interaction
		add  []string // URL=body
		o    MergeOptions
		want []string // bodies, in file order
		ids  []int
	}{
		{name: "into nothing", add: []string{"/a=x", "/b=y"}, want: []string{"x", "y"}, ids: []int{0, 1}},
		{name: "after everything, ids after the largest", have: []*Interaction{a0, b1, a7}, add: []string{"/b=x"},
			want: []string{"a0", "b1", "a7", "x"}, ids: []int{8}},
		{name: "another's recording of the request came after mine", have: []*Interaction{a0, b1, a7}, add: []string{"/a=x", "/b=y", "/a=z"},
			o: MergeOptions{Own: map[int]bool{0: true}}, want: []string{"a0", "x", "z", "b1", "a7", "y"}, ids: []int{8, 9, 10}},
		{name: "mine is the last of the request", have: []*Interaction{a0, b1, a7}, add: []string{"/a=x"},
			o: MergeOptions{Own: map[int]bool{7: true}}, want: []string{"a0", "b1", "a7", "x"}, ids: []int{8}},
		{name: "replaced", have: []*Interaction{a0, b1, a7}, add: []string{"/a=x"},
			o: MergeOptions{Replace: map[int]*Interaction{0: a0}}, want: []string{"b1", "a7", "x"}, ids: []int{8}},
		{name: "replaced, but changed since", have: []*Interaction{a0, b1}, add: []string{"/a=x"},
			o: MergeOptions{Replace: map[int]*Interaction{0: &edited}}, want: []string{"a0", "b1", "x"}, ids: []int{2}},
		{name: "every one replaced", have: []*Interaction{a0}, add: []string{"/a=x"},
			o: MergeOptions{Replace: map[int]*Interaction{0: a0}}, want: []string{"x"}, ids: []int{1}},
	}
	for _, tt := range tests {
		for _, layout := range []string{"Write's", "another"} {
			t.Run(tt.name+", "+layout, func(t *testing.T) {
				name := filepath.Join(t.TempDir(), "web.yaml")
				var before []byte
				if tt.have != nil {
					c := &Cassette{Version: FormatVersion, Interactions: tt.have}
					var err error
					if layout == "Write's" {
						err = c.Write(name)
					} else {
						var buf bytes.Buffer
						enc := yaml.NewEncoder(&buf)
						enc.SetIndent(2)
						if err = enc.Encode(encodeCassette(c)); err == nil {
							err = os.WriteFile(name, buf.Bytes(), 0o600)
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					before, _ = os.ReadFile(name)
					if _, err := split(bytes.NewReader(before)); errors.Is(err, errLayout) != (layout == "another") {
						t.Fatalf("split of the cassette in %s layout: %v", layout, err)
					}
				}
				var add []*Interaction
				for _, s := range tt.add {
					url, body, _ := strings.Cut(s, "=")
					add = append(add, recording(t, url, body))
				}
				ids, err := Merge(name, add, tt.o)
				if err != nil {
					t.Fatal(err)
				}
				after, _ := os.ReadFile(name)
				c, err := Load(name)
				if err != nil {
					t.Fatal(err)
				}
				var bodies []string
				for _, in := range c.Interactions {
					bodies = append(bodies, in.Response.Body)
				}
				if !slices.Equal(bodies, tt.want) || !slices.Equal(ids, tt.ids) {
					t.Fatalf("merged %v with ids %v; want %v with ids %v", bodies, ids, tt.want, tt.ids)
				}
				for _, in := range add {
					if in.ID != 0 {
						t.Errorf("an added interaction's id changed to %d; the file gets a copy", in.ID)
					}
				}
				// Write's layout, whichever the file was in.
				written := filepath.Join(t.TempDir(), "again.yaml")
				if err := c.Write(written); err != nil {
					t.Fatal(err)
				}
				if again, _ := os.ReadFile(written); !bytes.Equal(after, again) {
					t.Errorf("the merged cassette is not in Write's layout:\n%s\nWrite:\n%s", after, again)
				}
				if layout == "Write's" && len(tt.want) > len(tt.add) && tt.want[0] == "a0" && !bytes.HasPrefix(after, before[:bytes.Index(before, []byte("\n    - id: 1\n"))]) {
					t.Errorf("the interaction that was first changed its bytes:\n%s\nwas:\n%s", after, before)
				}
			})
		}
	}
}

func TestMergeWritesNothingItCannotRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "web.yaml")
	junk := []byte("version: 3\ninteractions: []\n")
	if err := os.WriteFile(name, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(name, []*Interaction{recording(t, "/a", "x")}, MergeOptions{}); err == nil || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("merge into a cassette of another version: %v", err)
	}
	if b, _ := os.ReadFile(name); !bytes.Equal(b, junk) {
		t.Fatalf("the cassette became %q", b)
	}
}

func TestMergeWaitsForTheLockAndGivesUp(t *testing.T) {
	name := filepath.Join(t.TempDir(), "web.yaml")
	unlock, err := filelock.Lock(lockName(name), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Merge(name, []*Interaction{recording(t, "/a", "x")}, MergeOptions{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, filelock.ErrTimeout) || !strings.Contains(err.Error(), name) {
		t.Fatalf("merge while another holds the lock: %v; want filelock.ErrTimeout naming the cassette", err)
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cassette was written without the lock: %v", err)
	}
	unlock()
	if ids, err := Merge(name, []*Interaction{recording(t, "/a", "x")}, MergeOptions{}); err != nil || !slices.Equal(ids, []int{0}) {
		t.Fatalf("merge once the lock is free: %v %v", ids, err)
	}
}
