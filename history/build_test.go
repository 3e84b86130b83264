package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/history"
)

func TestBuildRefusesWhatNoTurnWrites(t *testing.T) {
	web := history.Built{Surface: history.SurfaceWeb, Start: time.Unix(1790000000, 0)}
	tests := []struct {
		name  string
		b     history.Built
		items []history.Item
		want  string
	}{
		{"a reply first", web, []history.Item{history.Reply("hi")}, "a Reply needs an input before it"},
		{"slack in web", web, []history.Item{history.SlackMention("hi")}, "a Slack input in a web conversation"},
		{"web in slack", history.Built{Surface: history.SurfaceSlack}, []history.Item{history.WebMessage("hi")}, "a WebMessage in a Slack conversation"},
		{"no surface", history.Built{}, nil, `surface ""`},
	}
	for _, tt := range tests {
		if _, err := history.Build(tt.b, tt.items...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %s", tt.name, err, tt.want)
		}
	}
}

// Two inputs before a reply are one turn with both; the rows are dense
// and valid recorded history.
func TestBuildBatchesInputsIntoOneTurn(t *testing.T) {
	rec, err := history.Build(history.Built{Surface: history.SurfaceWeb, Start: time.Unix(1790000000, 0), Model: "m", BotName: "bot",
		Author: history.Author{Email: "person1@example.com", UserID: "dashboard:person1", UserName: "Person 1"}},
		history.WebMessage("one"), history.WebMessage("two"), history.Reply("both", history.ToolUse{Name: "lookup", Input: map[string]string{"q": "x"}, Result: "found"}))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for i, e := range rec.Events {
		if e.Seq != int64(i) {
			t.Fatalf("row %d has seq %d", i, e.Seq)
		}
		types = append(types, e.Type)
	}
	want := "message message turn_started turn_routed user_message user_message tool_execution_started assistant_message tool_result " +
		"assistant_message message_updated message_handled message_updated message_handled message message_handled turn_completed"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("rows\n %s\nwant\n %s", got, want)
	}
	if !strings.Contains(string(rec.Events[2].Payload), `"inputMessageIds":["api-msg:`) || strings.Count(string(rec.Events[2].Payload), "api-msg:") != 2 {
		t.Fatalf("turn_started %s", rec.Events[2].Payload)
	}
	var doc strings.Builder
	if err := history.Write(&doc, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := history.Read(strings.NewReader(doc.String()), "built"); err != nil {
		t.Fatalf("the built history does not read back: %v", err)
	}
}
