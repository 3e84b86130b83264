package transcript

import (
	"encoding/json"
	"html/template"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/history"
)

// Page is one transcript: the conversations of a test, or of a file.
type Page struct {
	Title         string
	Conversations []Conversation
}

// Conversation is one conversation's parts, in order.
type Conversation struct {
	ID    string
	Parts []Part
}

// Part is one step of a conversation.
type Part struct {
	// Kind is heading (a call's input), message, tool, turn or score.
	Kind string
	// Role (user, assistant) and Text are a message's; Text also heads a
	// call and states a verdict's rationale.
	Role, Text string
	// Name, Args, Result and Status are a tool call's; Status is also a
	// turn's state and Name a judge's.
	Name, Args, Result, Status string
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:2rem;border-bottom:1px solid #ddd}
.heading{margin:1.2rem 0 .4rem;font-weight:600;color:#555}
.message{margin:.4rem 0;padding:.5rem .75rem;border-radius:.5rem;white-space:pre-wrap}
.user{background:#eef3ff}.assistant{background:#f1f8ee}
.tool{margin:.4rem 0 .4rem 1rem;padding:.4rem .75rem;border-left:3px solid #b9a;font-size:.9rem}
.tool pre{margin:.2rem 0;white-space:pre-wrap;word-break:break-word}
.turn{font-size:.85rem;color:#666}.score{margin:.4rem 0;padding:.4rem .75rem;background:#fff7e0;border-radius:.5rem}
</style></head><body>
<h1>{{.Title}}</h1>
{{range .Conversations}}<section class="conversation"><h2>{{.ID}}</h2>
{{range .Parts}}{{if eq .Kind "heading"}}<div class="heading">{{.Text}}</div>
{{else if eq .Kind "message"}}<div class="message {{.Role}}"><b>{{.Role}}:</b> {{.Text}}</div>
{{else if eq .Kind "tool"}}<div class="tool"><b>tool {{.Name}}</b> ({{.Status}})<pre class="args">{{.Args}}</pre><pre class="result">{{.Result}}</pre></div>
{{else if eq .Kind "turn"}}<div class="turn">turn {{.Name}}: {{.Status}}</div>
{{else if eq .Kind "score"}}<div class="score"><b>judge {{.Name}}: {{.Status}}</b> {{.Text}}</div>
{{end}}{{end}}</section>
{{end}}</body></html>
`))

// Write renders p as HTML.
func Write(w io.Writer, p Page) error { return page.Execute(w, p) }

// FromHistory is a recorded conversation's transcript: its visible
// messages, its tool calls with their results, and its turns.
func FromHistory(title string, rec *history.Recording) Page {
	c := Conversation{ID: title}
	if rec.Exporter != nil && rec.Exporter.ConversationID != "" {
		c.ID = rec.Exporter.ConversationID
	}
	results := map[string]string{}
	for _, e := range rec.Events {
		if e.Type == "tool_result" {
			id, text := toolResult(e.Payload)
			results[id] = text
		}
	}
	for _, e := range rec.Events {
		var p struct {
			Role, Text, TurnID, Outcome, FailureCode string
			Message                                  string
		}
		json.Unmarshal(e.Payload, &p)
		switch e.Type {
		case "message":
			c.Parts = append(c.Parts, Part{Kind: "message", Role: p.Role, Text: p.Text})
		case "assistant_message":
			var m struct {
				Content []struct {
					Type, ID, Name string
					Arguments      json.RawMessage
				}
			}
			json.Unmarshal([]byte(p.Message), &m)
			for _, b := range m.Content {
				if b.Type == "toolCall" {
					r, ok := results[b.ID]
					status := "completed"
					if !ok {
						status = "no result"
					}
					c.Parts = append(c.Parts, Part{Kind: "tool", Name: b.Name, Args: string(b.Arguments), Result: r, Status: status})
				}
			}
		case "turn_started":
			c.Parts = append(c.Parts, Part{Kind: "turn", Name: p.TurnID, Status: "started"})
		case "turn_completed":
			c.Parts = append(c.Parts, Part{Kind: "turn", Name: p.TurnID, Status: "succeeded (" + p.Outcome + ")"})
		case "turn_failed":
			c.Parts = append(c.Parts, Part{Kind: "turn", Name: p.TurnID, Status: "failed (" + p.FailureCode + ")"})
		}
	}
	return Page{Title: title, Conversations: []Conversation{c}}
}

func toolResult(payload []byte) (id, text string) {
	var p struct{ ToolCallID, Message string }
	json.Unmarshal(payload, &p)
	var m struct {
		Content []struct{ Text string }
	}
	json.Unmarshal([]byte(p.Message), &m)
	var parts []string
	for _, c := range m.Content {
		parts = append(parts, c.Text)
	}
	return p.ToolCallID, strings.Join(parts, "\n")
}
