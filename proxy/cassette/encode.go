package cassette

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// yaml.v3 writes a text of many lines that starts with a space or a
// newline as a literal with an indentation digit, and reads that back
// without its leading newline, or, in a list (a header's or a form
// field's values), not at all. The types below are the cassette's as
// yaml.v3 writes them, with every text a text: which marshals as itself,
// but for those, which it writes double-quoted, read back as they were.

// encodeCassette is c in the types below, for yaml.Marshal; so is
// encodeInteraction for one interaction.
func encodeCassette(c *Cassette) *encodedCassette {
	e := &encodedCassette{Version: c.Version, Interactions: make([]*encodedInteraction, len(c.Interactions))}
	for i, in := range c.Interactions {
		e.Interactions[i] = encodeInteraction(in)
	}
	return e
}

type text string

func (t text) MarshalYAML() (any, error) {
	s := string(t)
	if strings.Contains(s, "\n") && (s[0] == ' ' || s[0] == '\n') {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s}, nil
	}
	return s, nil
}

type encodedCassette struct {
	Version      int                   `yaml:"version"`
	Interactions []*encodedInteraction `yaml:"interactions"`
}

type encodedInteraction struct {
	ID       int             `yaml:"id"`
	Request  encodedRequest  `yaml:"request"`
	Response encodedResponse `yaml:"response"`
	Key      text            `yaml:"agentvcr_key,omitempty"`
	Rule     text            `yaml:"agentvcr_rule,omitempty"`
	Chunks   []Chunk         `yaml:"agentvcr_chunks,omitempty"`
}

type encodedRequest struct {
	Proto      text              `yaml:"proto,omitempty"`
	ProtoMajor int               `yaml:"proto_major,omitempty"`
	ProtoMinor int               `yaml:"proto_minor,omitempty"`
	Host       text              `yaml:"host"`
	Body       text              `yaml:"body"`
	Form       map[string][]text `yaml:"form,omitempty"`
	Headers    map[string][]text `yaml:"headers"`
	URL        text              `yaml:"url"`
	Method     text              `yaml:"method"`
}

type encodedResponse struct {
	Proto      text              `yaml:"proto,omitempty"`
	ProtoMajor int               `yaml:"proto_major,omitempty"`
	ProtoMinor int               `yaml:"proto_minor,omitempty"`
	Body       text              `yaml:"body"`
	Headers    map[string][]text `yaml:"headers"`
	Status     text              `yaml:"status"`
	Code       int               `yaml:"code"`
	Duration   time.Duration     `yaml:"duration"`
}

func encodeInteraction(in *Interaction) *encodedInteraction {
	if in == nil {
		return nil
	}
	r, p := &in.Request, &in.Response
	return &encodedInteraction{ID: in.ID, Key: text(in.Key), Rule: text(in.Rule), Chunks: in.Chunks,
		Request: encodedRequest{Proto: text(r.Proto), ProtoMajor: r.ProtoMajor, ProtoMinor: r.ProtoMinor, Host: text(r.Host),
			Body: text(r.Body), Form: texts(r.Form), Headers: texts(r.Headers), URL: text(r.URL), Method: text(r.Method)},
		Response: encodedResponse{Proto: text(p.Proto), ProtoMajor: p.ProtoMajor, ProtoMinor: p.ProtoMinor, Body: text(p.Body),
			Headers: texts(p.Headers), Status: text(p.Status), Code: p.Code, Duration: p.Duration}}
}

// texts is a header or form map with its values as texts; nil stays nil.
func texts[M ~map[string][]string](m M) map[string][]text {
	if m == nil {
		return nil
	}
	out := make(map[string][]text, len(m))
	for k, vs := range m {
		if vs == nil {
			out[k] = nil
			continue
		}
		t := make([]text, len(vs))
		for i, v := range vs {
			t[i] = text(v)
		}
		out[k] = t
	}
	return out
}
