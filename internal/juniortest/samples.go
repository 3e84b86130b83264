package juniortest

import (
	"bytes"
	"fmt"

	"github.com/agentvcr/agentvcr/history"
)

// SlackThread is a Slack thread with two people: a tool-using turn, rows a
// fork never copies, a seq gap, a compaction that starts history version 1,
// and two more turns after it. Its replies, in order, are in Replies.
func SlackThread() (c *Conversation, replies []string) {
	b := Slack("C0AGENTVCR", "1790000001.000100")
	ada := b.SlackPerson(1, "T0AGENTVCR", "U0ADA00001", "Ada Quill")
	bo := b.SlackPerson(2, "T0AGENTVCR", "U0BO000002", "Bo Rivet")
	replies = append(replies, b.Turn(ada, "Can you check whether the deploy of <https://status.example.com|status> went out? cc <@U0BO000002>",
		"The deploy went out at 14:02; status is green.",
		Tool{Name: "webFetch", Args: map[string]any{"url": "https://status.example.com"}, Result: "All systems operational"}))
	b.Uncopied(ada)
	b.Gap(3)
	replies = append(replies, b.Turn(bo, "Thanks. What changed in it?", "Two fixes: the retry budget and the cache key."))
	b.Compaction("Ada asked about the deploy; it went out at 14:02. Bo asked what changed: retry budget and cache key.")
	replies = append(replies, b.Turn(ada, "Write the changelog line & keep it <80 chars.", "Deploy 14:02: retry budget + cache key fixes.",
		Tool{Name: "slackChannelReadMessages", Args: map[string]any{"channel": "C0AGENTVCR", "limit": 5}, Result: "<@U0ADA00001>: ship it"}))
	replies = append(replies, b.Turn(bo, "Perfect.", "Glad it helps."))
	return b.Conversation(), replies
}

// WebLaunch is a web conversation of one person planning a launch, with a
// tool call in its first turn and rows a fork never copies.
func WebLaunch() (c *Conversation, replies []string) {
	b := Web("0c3e1e9a4d97bb760f0656d0")
	cy := b.WebPerson(1, "Cy Ledger")
	replies = append(replies, b.Turn(cy, "Help me plan the Orbit launch. We ship on March 12.", "Plan: lock owners, then go/no-go on March 10.",
		Tool{Name: "updatePlan", Args: map[string]any{"plan": []any{map[string]any{"step": "Lock owners", "status": "pending"}}}, Result: "Plan updated"}))
	b.Uncopied(cy)
	replies = append(replies, b.Turn(cy, "Add a go/no-go check two days before.", "Go/no-go: March 10."))
	return b.Conversation(), replies
}

// Long is a Slack thread of at least n rows, in turns of two tool calls,
// for benchmarks; every tenth turn is followed by uncopied rows.
func Long(n int) *Conversation {
	b := Slack("C0LONGLONG", "1790000002.000100")
	ada := b.SlackPerson(1, "T0AGENTVCR", "U0ADA00001", "Ada Quill")
	for i := 0; len(b.c.Events) < n; i++ {
		b.Turn(ada, fmt.Sprintf("Step %d: summarize the incident timeline so far and list open actions.", i),
			fmt.Sprintf("Step %d done: timeline summarized, three actions open.", i),
			Tool{Name: "webFetch", Args: map[string]any{"url": fmt.Sprintf("https://example.com/incidents/%d", i)},
				Result: "Incident timeline: 14:02 deploy, 14:05 alerts, 14:09 rollback, 14:30 all clear."},
			Tool{Name: "slackChannelReadMessages", Args: map[string]any{"channel": "C0LONGLONG", "limit": 20},
				Result: "<@U0ADA00001>: rollback done\n<@U0ADA00001>: monitoring"})
		if i%10 == 9 {
			b.Uncopied(ada)
		}
	}
	return b.Conversation()
}

// Exports are raw exports of Junior-shaped Slack conversations of 40 turns,
// each with its own two people and channel, as recorded history without
// the rows a fork never copies, until they hold at least size bytes:
// the sanitizer's benchmark corpus. total is their size.
func Exports(size int) (docs [][]byte, total int, err error) {
	names := []string{"Ada Quill", "Bo Rivet", "Cy Ledger", "Dee Marsh", "Eli Stone", "Fay North", "Gus Vale", "Hal Brook"}
	for i := 0; total < size; i++ {
		b := Slack(fmt.Sprintf("C0BENCH%03d", i%1000), fmt.Sprintf("17900%05d.000100", i))
		a := b.SlackPerson(2*i+1, "T0AGENTVCR", fmt.Sprintf("U0%08X", uint32(i)*2654435761), names[i%len(names)])
		c := b.SlackPerson(2*i+2, "T0AGENTVCR", fmt.Sprintf("U1%08X", uint32(i)*2246822519), names[(i+3)%len(names)])
		for turn := 0; turn < 40; turn++ {
			who := a
			if turn%3 == 2 {
				who = c
			}
			b.Turn(who, fmt.Sprintf("Step %d: %s, check https://acme.slack.com/archives/C0BENCH%03d and mail %s", turn,
				*c.DisplayName, i%1000, *c.Email), "Done: timeline summarized, three actions open.",
				Tool{Name: "webFetch", Args: map[string]any{"url": "https://example.com/incident"},
					Result: "Incident timeline: 14:02 deploy, 14:05 alerts, 14:09 rollback, 14:30 all clear."})
		}
		conv := b.Conversation()
		rec := &history.Recording{Header: history.Header{Version: 1, Surface: conv.Surface,
			Exporter: &history.Exporter{Tool: "agentvcr", ConversationID: conv.ID}, Identities: conv.Identities}}
		for _, e := range conv.Events {
			if !Uncopied(e.Type) {
				rec.Events = append(rec.Events, e)
			}
		}
		var buf bytes.Buffer
		if err := history.Write(&buf, rec); err != nil {
			return nil, 0, err
		}
		docs = append(docs, buf.Bytes())
		total += buf.Len()
	}
	return docs, total, nil
}
