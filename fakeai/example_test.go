package fakeai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentvcr/agentvcr/fakeai"
)

// A wiring test scripts the model, drives the app (here, one request in
// the OpenAI dialect stands for it), and reads what the model was asked.
func ExampleModel() {
	// In a test, fakeai.New(t): failures then fail t.
	model := fakeai.NewModel(func(failure string) { fmt.Println(failure) })
	titler := fakeai.Agent{Name: "titler", SystemPrefix: "Write a title"}
	model.Respond(titler, fakeai.Text("Deploy went out"))
	llm := httptest.NewServer(model) // the app's model base URL
	defer llm.Close()

	resp, err := http.Post(llm.URL+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"gpt-fake","messages":[{"role":"system","content":"Write a title for this thread."},{"role":"user","content":"did the deploy go out?"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println(answer.Choices[0].Message.Content)

	for _, c := range model.Calls(titler) {
		fmt.Printf("%s was asked %q (%s, %s)\n", c.Agent, c.Prompt.LastUser(), c.Prompt.Dialect, c.Prompt.Purpose)
	}
	// Output:
	// Deploy went out
	// titler was asked "did the deploy go out?" (openai-chat, text)
}
