package catalog_test

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/catalog"
)

// Every matcher passes on what it expects and fails on what it does
// not, and says both what it expected and what it saw.
func TestMatchers(t *testing.T) {
	run := catalog.Observation{
		Messages:    []string{"Checking the thread…", "The launch is on ＭＡＲＣＨ   12."},
		Turns:       []string{"succeeded", "succeeded"},
		State:       "succeeded",
		Runtime:     map[string]string{"model": "anthropic/claude-sonnet-4.5"},
		Environment: map[string]string{"driver": "process"},
		Document:    []byte(`{"events":[{"seq":1,"data":{"type":"tool_calls","calls":[{"name":"slackThreadRead"}]}}],"count":2}`),
	}
	tests := []struct {
		m                 catalog.Matcher
		pass              bool
		expected, sawPart string
	}{
		{catalog.MessageExact("The launch is on ＭＡＲＣＨ   12."), true, `"The launch is on ＭＡＲＣＨ   12."`, "ＭＡＲＣＨ"},
		{catalog.MessageExact("The launch is on March 12."), false, `"The launch is on March 12."`, "ＭＡＲＣＨ"},
		{catalog.MessageContains("launch is on march 12"), true, `a message holding "launch is on march 12"`, "The launch"},
		{catalog.MessageContains("March 13"), false, `a message holding "March 13"`, "The launch"},
		{catalog.MessageRegex(`(?i)Ｍ`), true, "a message matching /(?i)Ｍ/", "The launch"},
		{catalog.MessageRegex(`^Checking`), false, "a message matching /^Checking/", "The launch"},
		{catalog.MessagesInOrder("checking", "march 12"), true, `messages holding, in order: "checking", "march 12"`, `"Checking the thread…"`},
		{catalog.MessagesInOrder("march 12", "checking"), false, `messages holding, in order: "march 12", "checking"`, `"Checking the thread…"`},
		{catalog.TurnState("succeeded"), true, "every turn succeeded", "turns succeeded, succeeded"},
		{catalog.TurnState("failed"), false, "every turn failed", "turns succeeded, succeeded"},
		{catalog.RunState("succeeded"), true, "the run succeeded", "the run succeeded"},
		{catalog.RunState("timeout"), false, "the run timeout", "the run succeeded"},
		{catalog.Runtime("model", "anthropic/claude-sonnet-4.5"), true, `runtime model = "anthropic/claude-sonnet-4.5"`, `runtime model = "anthropic/claude-sonnet-4.5"`},
		{catalog.Runtime("model", "anthropic/claude-haiku-4.5"), false, `runtime model = "anthropic/claude-haiku-4.5"`, `runtime model = "anthropic/claude-sonnet-4.5"`},
		{catalog.Runtime("region", "eu"), false, `runtime region = "eu"`, "no runtime region"},
		{catalog.EnvironmentMeta("driver", "process"), true, `environment driver = "process"`, `environment driver = "process"`},
		{catalog.EnvironmentMeta("driver", "in-process"), false, `environment driver = "in-process"`, `environment driver = "process"`},
		{catalog.JSONPath(`events.0.data.calls.0.name`, "slackThreadRead"), true, `events.0.data.calls.0.name = "slackThreadRead"`, `= "slackThreadRead"`},
		{catalog.JSONPath(`count`, 3), false, "count = 3", "count = 2"},
		{catalog.JSONPath(`missing`, true), false, "missing = true", "missing absent"},
		{catalog.JSONSchema(`{"type":"object","required":["events"]}`), true, "a document valid against the schema", "a valid document"},
		{catalog.JSONSchema(`{"type":"object","required":["turns"]}`), false, "a document valid against the schema", "missing property 'turns'"},
	}
	for _, tt := range tests {
		r := tt.m.Check(run)
		if r.Pass != tt.pass || r.Expected != tt.expected || !strings.Contains(r.Saw, tt.sawPart) || r.Matcher != string(tt.m.Kind) {
			t.Errorf("%s %q: %+v; want pass=%v, expected %q, saw holding %q", tt.m.Kind, tt.m.Text+strings.Join(tt.m.Texts, ","), r, tt.pass, tt.expected, tt.sawPart)
		}
	}
	// A run with nothing to show fails every message matcher, and says so.
	for _, m := range []catalog.Matcher{catalog.MessageExact("x"), catalog.MessageContains("x"), catalog.MessageRegex("x"), catalog.MessagesInOrder("x")} {
		if r := m.Check(catalog.Observation{}); r.Pass || r.Saw != "no message" {
			t.Errorf("%s on nothing: %+v", m.Kind, r)
		}
	}
	if r := catalog.MessageContains("strasse").Check(catalog.Observation{Messages: []string{"Die Straße"}}); !r.Pass {
		t.Errorf("case folding: %+v", r)
	}
	if r := catalog.TurnState("succeeded").Check(catalog.Observation{}); r.Pass || r.Saw != "no turn" {
		t.Errorf("a turn state with no turn: %+v", r)
	}
	if r := catalog.JSONSchema(`{"type":"object"}`).Check(catalog.Observation{}); r.Pass || r.Saw != "no JSON document" {
		t.Errorf("a schema with no document: %+v", r)
	}
}
