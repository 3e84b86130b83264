package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tidwall/gjson"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Matcher is one typed, deterministic check of what a run showed. Build
// it with MessageExact, MessageContains, MessageRegex, MessagesInOrder,
// TurnState, RunState, Runtime, EnvironmentMeta, JSONPath or JSONSchema;
// it is data, so that it is part of the suite's fingerprint.
type Matcher struct {
	Kind  MatcherKind     `json:"kind"`
	Text  string          `json:"text,omitempty"`
	Texts []string        `json:"texts,omitempty"`
	Key   string          `json:"key,omitempty"`
	Path  string          `json:"path,omitempty"`
	Want  json.RawMessage `json:"want,omitempty"`
}

// MatcherKind says what a Matcher checks.
type MatcherKind string

// The kinds of Matcher.
const (
	KindMessageExact    MatcherKind = "message_exact"
	KindMessageContains MatcherKind = "message_contains"
	KindMessageRegex    MatcherKind = "message_regex"
	KindMessagesOrdered MatcherKind = "messages_ordered"
	KindTurnState       MatcherKind = "turn_state"
	KindRunState        MatcherKind = "run_state"
	KindRuntime         MatcherKind = "runtime"
	KindEnvironment     MatcherKind = "environment"
	KindJSONPath        MatcherKind = "json_path"
	KindJSONSchema      MatcherKind = "json_schema"
)

// MessageExact passes when the agent's last message is text, exactly.
func MessageExact(text string) Matcher { return Matcher{Kind: KindMessageExact, Text: text} }

// MessageContains passes when the agent's last message holds text, both
// normalized: Unicode NFKC, case folded, runs of spaces as one.
func MessageContains(text string) Matcher { return Matcher{Kind: KindMessageContains, Text: text} }

// MessageRegex passes when the agent's last message matches the regular
// expression (RE2, as Go's regexp).
func MessageRegex(expr string) Matcher { return Matcher{Kind: KindMessageRegex, Text: expr} }

// MessagesInOrder passes when the agent's messages hold each text
// (normalized, as MessageContains), in this order, one message each.
func MessagesInOrder(texts ...string) Matcher {
	return Matcher{Kind: KindMessagesOrdered, Texts: texts}
}

// TurnState passes when every turn of the run ended in state
// (succeeded, no_reply, failed).
func TurnState(state string) Matcher { return Matcher{Kind: KindTurnState, Text: state} }

// RunState passes when the run as a whole ended in state: succeeded
// (every turn did), failed (a turn did), or the state of its last turn
// otherwise; none when it had no turn. A run that timed out is not
// graded: the attempt is a timeout.
func RunState(state string) Matcher { return Matcher{Kind: KindRunState, Text: state} }

// Runtime passes when the run reports key as value (such as "model", the
// model every agent request named).
func Runtime(key, value string) Matcher { return Matcher{Kind: KindRuntime, Key: key, Text: value} }

// EnvironmentMeta passes when the environment's metadata has key as
// value.
func EnvironmentMeta(key, value string) Matcher {
	return Matcher{Kind: KindEnvironment, Key: key, Text: value}
}

// JSONPath passes when the run's document has want at path (a gjson
// path), compared as JSON values.
func JSONPath(path string, want any) Matcher {
	b, err := json.Marshal(want)
	if err != nil {
		panic(fmt.Sprintf("catalog.JSONPath(%q): want is not JSON: %v", path, err))
	}
	return Matcher{Kind: KindJSONPath, Path: path, Want: b}
}

// JSONSchema passes when the run's document is valid against schema.
func JSONSchema(schema string) Matcher {
	return Matcher{Kind: KindJSONSchema, Want: json.RawMessage(schema)}
}

// Observation is what a run showed, for the matchers.
type Observation struct {
	// Messages are the agent's delivered messages, in order.
	Messages []string
	// Turns are the states the run's turns ended in.
	Turns []string
	// State is the run's: succeeded, failed, another state of its last
	// turn, or none.
	State string
	// Runtime and Environment are what the run and its environment
	// report about themselves.
	Runtime     map[string]string
	Environment map[string]string
	// Document is a JSON document the run produced (a structured answer,
	// an API's state), for JSONPath and JSONSchema.
	Document json.RawMessage
}

// Result is what a matcher made of an observation.
type Result struct {
	Matcher  string `json:"matcher"`
	Pass     bool   `json:"pass"`
	Expected string `json:"expected"`
	Saw      string `json:"saw"`
}

// valid says why the matcher cannot run.
func (m Matcher) valid() error {
	switch m.Kind {
	case KindMessageExact, KindTurnState, KindRunState:
		if m.Text == "" {
			return fmt.Errorf("%s: no text", m.Kind)
		}
	case KindMessageContains:
		// A text that normalizes to nothing would pass on any message.
		if normalize(m.Text) == "" {
			return fmt.Errorf("%s: no text but spaces", m.Kind)
		}
	case KindMessageRegex:
		if m.Text == "" {
			return fmt.Errorf("%s: an empty expression matches any message", m.Kind)
		}
		if _, err := regexp.Compile(m.Text); err != nil {
			return fmt.Errorf("%s: %v", m.Kind, err)
		}
	case KindMessagesOrdered:
		if len(m.Texts) == 0 || slices.ContainsFunc(m.Texts, func(t string) bool { return normalize(t) == "" }) {
			return fmt.Errorf("%s: no texts, or a text of spaces", m.Kind)
		}
	case KindRuntime, KindEnvironment:
		if m.Key == "" {
			return fmt.Errorf("%s: no key", m.Kind)
		}
	case KindJSONPath:
		if m.Path == "" || !json.Valid(m.Want) {
			return fmt.Errorf("%s: a path and a JSON value", m.Kind)
		}
	case KindJSONSchema:
		if _, err := compileSchema(m.Want); err != nil {
			return fmt.Errorf("%s: %v", m.Kind, err)
		}
	default:
		return fmt.Errorf("unknown matcher kind %q", m.Kind)
	}
	return nil
}

// Check runs the matcher on o.
func (m Matcher) Check(o Observation) Result {
	r := Result{Matcher: string(m.Kind)}
	last := ""
	if len(o.Messages) > 0 {
		last = o.Messages[len(o.Messages)-1]
	}
	switch m.Kind {
	case KindMessageExact:
		r.Expected, r.Saw, r.Pass = quote(m.Text), lastSeen(o), len(o.Messages) > 0 && last == m.Text
	case KindMessageContains:
		r.Expected, r.Saw = "a message holding "+quote(m.Text), lastSeen(o)
		r.Pass = len(o.Messages) > 0 && strings.Contains(normalize(last), normalize(m.Text))
	case KindMessageRegex:
		re, err := regexp.Compile(m.Text)
		r.Expected, r.Saw = "a message matching /"+m.Text+"/", lastSeen(o)
		r.Pass = err == nil && len(o.Messages) > 0 && re.MatchString(last)
	case KindMessagesOrdered:
		r.Expected = "messages holding, in order: " + strings.Join(quoteAll(m.Texts), ", ")
		r.Saw = strings.Join(quoteAll(o.Messages), ", ")
		if len(o.Messages) == 0 {
			r.Saw = "no message"
		}
		i := 0
		for _, msg := range o.Messages {
			if i < len(m.Texts) && strings.Contains(normalize(msg), normalize(m.Texts[i])) {
				i++
			}
		}
		r.Pass = i == len(m.Texts)
	case KindTurnState:
		r.Expected, r.Saw = "every turn "+m.Text, "turns "+strings.Join(o.Turns, ", ")
		if len(o.Turns) == 0 {
			r.Saw = "no turn"
		}
		r.Pass = len(o.Turns) > 0
		for _, t := range o.Turns {
			r.Pass = r.Pass && t == m.Text
		}
	case KindRunState:
		r.Expected, r.Saw, r.Pass = "the run "+m.Text, "the run "+o.State, o.State == m.Text
	case KindRuntime, KindEnvironment:
		meta, what := o.Runtime, "runtime"
		if m.Kind == KindEnvironment {
			meta, what = o.Environment, "environment"
		}
		v, ok := meta[m.Key]
		r.Expected = fmt.Sprintf("%s %s = %s", what, m.Key, quote(m.Text))
		r.Saw = fmt.Sprintf("%s %s = %s", what, m.Key, quote(v))
		if !ok {
			r.Saw = fmt.Sprintf("no %s %s", what, m.Key)
		}
		r.Pass = ok && v == m.Text
	case KindJSONPath:
		r.Expected = fmt.Sprintf("%s = %s", m.Path, m.Want)
		got := gjson.GetBytes(o.Document, m.Path)
		if !got.Exists() {
			r.Saw = m.Path + " absent"
			break
		}
		r.Saw = m.Path + " = " + got.Raw
		r.Pass = sameJSON([]byte(got.Raw), m.Want)
	case KindJSONSchema:
		r.Expected = "a document valid against the schema"
		sch, err := compileSchema(m.Want)
		if err != nil {
			r.Saw = "the schema does not compile: " + err.Error()
			break
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(o.Document))
		if err != nil {
			r.Saw = "no JSON document"
			break
		}
		if err := sch.Validate(inst); err != nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				r.Saw = strings.Join(strings.Fields(ve.Error()), " ")
			} else {
				r.Saw = err.Error()
			}
			break
		}
		r.Saw, r.Pass = "a valid document", true
	default:
		r.Saw = "an unknown matcher kind"
	}
	return r
}

func lastSeen(o Observation) string {
	if len(o.Messages) == 0 {
		return "no message"
	}
	return quote(o.Messages[len(o.Messages)-1])
}

// quote quotes a text for a result, cut to 200 characters.
func quote(s string) string {
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func quoteAll(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, quote(s))
	}
	return out
}

// normalize is how MessageContains compares: NFKC, case folded (ß as
// ss), runs of spaces as one.
func normalize(s string) string {
	s = cases.Fold().String(norm.NFKC.String(s))
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

const schemaURL = "https://catalog.invalid/matcher-schema.json"

func compileSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}
