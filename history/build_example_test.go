package history_test

import (
	"fmt"
	"time"

	"github.com/agentvcr/agentvcr/history"
)

// Build writes the rows a real turn writes, without calling a model.
func ExampleBuild() {
	rec, err := history.Build(history.Built{Surface: history.SurfaceWeb, Start: time.Unix(1790000000, 0), Model: "anthropic/claude-sonnet-4.5",
		BotName: "junior-example", Author: history.Author{Email: "person1@example.com", UserID: "dashboard:person1", UserName: "Person 1"}},
		history.WebMessage("When do we ship?"), history.Reply("March 12."))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range rec.Events {
		fmt.Println(e.Seq, e.Type)
	}
	// Output:
	// 0 message
	// 1 turn_started
	// 2 turn_routed
	// 3 user_message
	// 4 user_message
	// 5 assistant_message
	// 6 message_updated
	// 7 message_handled
	// 8 message
	// 9 message_handled
	// 10 turn_completed
}
