// Package cassette stores the recording proxy's interactions: go-vcr v3
// cassettes (YAML, version 2, readable by go-vcr's cassette.Load) with a
// few extra keys go-vcr ignores, the stream chunks of a response among
// them. It also turns requests into canonical keys, finds recordings by
// key in constant time, explains a miss by the nearest recording, and
// redacts credentials before anything is written, refusing to write a
// cassette in which a secret survives.
package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentvcr/agentvcr/internal/atomicfile"
	"github.com/agentvcr/agentvcr/internal/secrets"
)

// FormatVersion is go-vcr v3's cassette format version.
const FormatVersion = 2

// Cassette is a list of interactions, as go-vcr v3 writes them.
type Cassette struct {
	Version      int            `yaml:"version"`
	Interactions []*Interaction `yaml:"interactions"`
}

// Interaction is one request and its response. The fields up to Response
// are go-vcr's; the rest are agentvcr's.
type Interaction struct {
	ID       int      `yaml:"id"`
	Request  Request  `yaml:"request"`
	Response Response `yaml:"response"`

	// Key is the canonical key of the request (see Key).
	Key string `yaml:"agentvcr_key,omitempty"`
	// Rule names the proxy rule that recorded it.
	Rule string `yaml:"agentvcr_rule,omitempty"`
	// Chunks are the pieces the response body arrived in, for a replay
	// that keeps them apart, as a streamed response needs.
	Chunks []Chunk `yaml:"agentvcr_chunks,omitempty"`
}

// Chunk is one piece of a response body: its end offset in the body and
// how long after the response headers it arrived.
type Chunk struct {
	End   int   `yaml:"end"`
	After int64 `yaml:"after_ms"`
}

// Request is a recorded request, in go-vcr's fields.
type Request struct {
	Proto      string      `yaml:"proto,omitempty"`
	ProtoMajor int         `yaml:"proto_major,omitempty"`
	ProtoMinor int         `yaml:"proto_minor,omitempty"`
	Host       string      `yaml:"host"`
	Body       string      `yaml:"body"`
	Form       url.Values  `yaml:"form,omitempty"`
	Headers    http.Header `yaml:"headers"`
	URL        string      `yaml:"url"`
	Method     string      `yaml:"method"`
}

// Response is a recorded response, in go-vcr's fields.
type Response struct {
	Proto      string        `yaml:"proto,omitempty"`
	ProtoMajor int           `yaml:"proto_major,omitempty"`
	ProtoMinor int           `yaml:"proto_minor,omitempty"`
	Body       string        `yaml:"body"`
	Headers    http.Header   `yaml:"headers"`
	Status     string        `yaml:"status"`
	Code       int           `yaml:"code"`
	Duration   time.Duration `yaml:"duration"`
}

// Load reads the cassette in the named file. Errors name the file, and
// the line where the YAML or the format went wrong. A cassette in the
// layout Write produces is read by a decoder of that layout alone, many
// times faster than yaml.v3 and with the same result.
func Load(name string) (*Cassette, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return decode(b, name)
}

// Decode reads a cassette; name is used in errors.
func Decode(r io.Reader, name string) (*Cassette, error) {
	var node yaml.Node
	dec := yaml.NewDecoder(r)
	if err := dec.Decode(&node); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("cassette %s: empty file", name)
		}
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	var c Cassette
	if err := node.Decode(&c); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	if c.Version != FormatVersion {
		return nil, fmt.Errorf("cassette %s: line %d: version %d is not supported (want %d, go-vcr v3's)",
			name, lineOf(&node, "version"), c.Version, FormatVersion)
	}
	for i, in := range c.Interactions {
		if err := check(name, i, interactionLine(&node, i), in); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// check refuses an interaction a replay cannot serve; i is its place in
// the cassette and line the line it starts on.
func check(name string, i, line int, in *Interaction) error {
	if in == nil || in.Request.Method == "" || in.Request.URL == "" {
		return fmt.Errorf("cassette %s: line %d: interaction %d has no request method or URL", name, line, i)
	}
	for j, ch := range in.Chunks {
		if ch.End < 0 || ch.End > len(in.Response.Body) || j > 0 && ch.End < in.Chunks[j-1].End {
			return fmt.Errorf("cassette %s: line %d: interaction %d: chunk %d ends at %d, outside its %d-byte body",
				name, line, i, j, ch.End, len(in.Response.Body))
		}
	}
	return nil
}

func lineOf(doc *yaml.Node, key string) int {
	if len(doc.Content) == 0 {
		return doc.Line
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1].Line
		}
	}
	return m.Line
}

func interactionLine(doc *yaml.Node, i int) int {
	if len(doc.Content) == 0 {
		return doc.Line
	}
	m := doc.Content[0]
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == "interactions" {
			if seq := m.Content[k+1]; i < len(seq.Content) {
				return seq.Content[i].Line
			}
		}
	}
	return m.Line
}

// ErrSecret is matched by the error of a Save that found a secret in what
// it was about to write, and wrote nothing.
var ErrSecret = errors.New("a secret survived redaction")

// Save writes the cassette to the named file atomically, mode 0600, after
// redacting every interaction. It refuses, writing nothing, if the
// serialized bytes still hold a secret shape, and says which line.
func (c *Cassette) Save(name string) error {
	c.Version = FormatVersion
	for _, in := range c.Interactions {
		Redact(in)
	}
	b, err := yaml.Marshal(encodeCassette(c))
	if err != nil {
		return fmt.Errorf("cassette %s: %w", name, err)
	}
	if found := secrets.Find(string(b)); len(found) > 0 {
		return fmt.Errorf("cassette %s: %w: %s, at line %d; nothing was written",
			name, ErrSecret, found[0].Rule, bytes.Count(b[:found[0].Start], []byte("\n"))+1)
	}
	return write(name, b)
}

// Prepare redacts an interaction, as Save does, and refuses it if a secret
// shape survives in its serialized form: what a recorder does once, when
// it captures an interaction, so that writing a cassette of prepared
// interactions (Write) costs no more than its encoding.
func Prepare(in *Interaction) error {
	Redact(in)
	b, err := yaml.Marshal(encodeInteraction(in))
	if err != nil {
		return err
	}
	if found := secrets.Find(string(b)); len(found) > 0 {
		return fmt.Errorf("%w: %s, at line %d of the interaction", ErrSecret, found[0].Rule, bytes.Count(b[:found[0].Start], []byte("\n"))+1)
	}
	return nil
}

// Write writes a cassette of prepared interactions (see Prepare) to the
// named file atomically, mode 0600.
func (c *Cassette) Write(name string) error {
	c.Version = FormatVersion
	b, err := yaml.Marshal(encodeCassette(c))
	if err != nil {
		return fmt.Errorf("cassette %s: %w", name, err)
	}
	return write(name, b)
}

func write(name string, b []byte) error {
	return atomicfile.Write(name, 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
