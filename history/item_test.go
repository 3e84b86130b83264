package history_test

import (
	"testing"

	"github.com/agentvcr/agentvcr/history"
)

// An item says whether it is a reply (what a fork cuts at) and shows
// itself as the call that made it.
func TestAnItemSaysWhatItIs(t *testing.T) {
	tests := []struct {
		item  history.Item
		reply bool
		str   string
	}{
		{history.Reply("March 12."), true, `history.Reply("March 12.")`},
		{history.Reply("Found it.", history.ToolUse{Name: "search"}), true, `history.Reply("Found it.", 1 tool use)`},
		{history.Reply("", history.ToolUse{Name: "a"}, history.ToolUse{Name: "b"}), true, `history.Reply("", 2 tool uses)`},
		{history.WebMessage("When?"), false, `history.WebMessage("When?")`},
		{history.SlackMention("when?"), false, `history.SlackMention("when?")`},
		{history.SlackThreadMessage("and?"), false, `history.SlackThreadMessage("and?")`},
		{history.Item{}, false, "history.Item{}"},
	}
	for _, tt := range tests {
		if got := tt.item.IsReply(); got != tt.reply {
			t.Errorf("%s.IsReply() = %v; want %v", tt.str, got, tt.reply)
		}
		if got := tt.item.String(); got != tt.str {
			t.Errorf("String() = %s; want %s", got, tt.str)
		}
	}
}
