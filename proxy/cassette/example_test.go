package cassette_test

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

// A replay opens its cassette without reading it, and reads a recording
// when it serves it.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "cassettes")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	m := &cassette.Matcher{}

	// What a recording run leaves: each interaction with its key.
	recorded := cassette.NewIndex()
	c := &cassette.Cassette{}
	for i, q := range []string{"Did deploy 42 go out?", "Who is on call?"} {
		in := &cassette.Interaction{ID: i,
			Request: cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages",
				Headers: http.Header{"Content-Type": {"application/json"}}, Body: fmt.Sprintf(`{"messages":[{"role":"user","content":%q}]}`, q)},
			Response: cassette.Response{Code: 200, Status: "200 OK", Body: fmt.Sprintf(`{"answer %d":true}`, i)}}
		recorded.Add(m, in) // sets in.Key
		c.Interactions = append(c.Interactions, in)
	}
	path := filepath.Join(dir, "model.yaml")
	if err := c.Write(path); err != nil {
		log.Fatal(err)
	}

	x, err := cassette.Open(m, path)
	if err != nil {
		log.Fatal(err)
	}
	ask := cassette.Request{Method: "POST", URL: "https://api.anthropic.com/v1/messages",
		Headers: http.Header{"Content-Type": {"application/json"}}, Body: `{"messages": [{"content": "Who is on call?", "role": "user"}]}`}
	in, ok, err := x.Next(m.Key(&ask))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.Len(), ok, in.ID, in.Response.Body)
	// Output: 2 true 1 {"answer 1":true}
}
