package slack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/agentvcr/agentvcr/proxy/slack"
)

// The mock is an http.Handler: a test seeds a channel and a thread, the
// agent posts its reply as it would to slack.com, and the test reads the
// thread back and every call the mock got.
func ExampleMock() {
	m := slack.New()
	m.AddChannel(slack.Channel{ID: "C0TEST0001", Name: "support"})
	parent := m.AddMessage("C0TEST0001", slack.Message{User: "U0TEST0001", Text: "when is the launch?"})
	srv := httptest.NewServer(m)
	defer srv.Close()

	// The agent's reply, in the thread.
	resp, err := http.PostForm(srv.URL+"/api/chat.postMessage", url.Values{
		"token": {"xoxb-test"}, "channel": {"C0TEST0001"}, "thread_ts": {parent.TS}, "text": {"March 12."}})
	if err != nil {
		panic(err)
	}
	resp.Body.Close()

	for _, msg := range m.Messages("C0TEST0001") {
		if msg.ThreadTS == parent.TS && msg.TS != parent.TS {
			fmt.Println("reply:", msg.Text)
		}
	}
	fmt.Println("calls of chat.postMessage:", len(m.Calls("chat.postMessage")), "unknown methods:", len(m.Unknown()))
	// Output:
	// reply: March 12.
	// calls of chat.postMessage: 1 unknown methods: 0
}
