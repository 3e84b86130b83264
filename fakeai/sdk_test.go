package fakeai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentvcr/agentvcr/fakeai"
)

// statusRoute is the agent's real tool: a route that answers what it was
// asked, as a status page would.
func statusRoute(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"service": r.URL.Query().Get("q"), "status": "deployed at 14:02"})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// lookup runs the tool: a real HTTP request to the route.
func lookup(t *testing.T, route string, input []byte) string {
	t.Helper()
	var in struct{ Q string }
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatalf("tool input %s: %v", input, err)
	}
	resp, err := http.Get(route + "/status?q=" + url.QueryEscape(in.Q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

var support = fakeai.Agent{Name: "support", SystemPrefix: "You are the support agent", Tools: []string{"lookup"}}

const final = "The deploy went out at 14:02."

// scripted returns a model that answers support with a lookup, then the
// final text, and a server for it.
func scripted(t *testing.T) (*fakeai.Model, *httptest.Server) {
	m := fakeai.New(t)
	m.Respond(support, fakeai.ToolCalls(fakeai.Call("lookup", map[string]string{"q": "deploy"})).Then(fakeai.Text(final)))
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, srv
}

// checkLoop checks what the model recorded of a tool loop.
func checkLoop(t *testing.T, m *fakeai.Model, routeAnswer, got string) {
	t.Helper()
	if got != final {
		t.Fatalf("final text %q; want %q", got, final)
	}
	calls := m.Calls(support)
	if len(calls) != 2 {
		t.Fatalf("%d calls; want the tool call and the answer", len(calls))
	}
	first := calls[0]
	if !strings.HasPrefix(first.Prompt.System, "You are the support agent") || first.Prompt.LastUser() != "Did the deploy go out?" ||
		len(first.Prompt.Tools) != 1 || first.Prompt.Tools[0].Name != "lookup" || !first.Done {
		t.Fatalf("first prompt %+v", first.Prompt)
	}
	if len(first.ToolCalls) != 1 {
		t.Fatalf("tool calls %+v", first.ToolCalls)
	}
	tc := first.ToolCalls[0]
	if tc.Name != "lookup" || string(tc.Input) != `{"q":"deploy"}` || !tc.Returned || tc.Result != routeAnswer {
		t.Fatalf("tool call %+v; want lookup with the route's answer %q", tc, routeAnswer)
	}
	if len(calls[1].Prompt.Results) != 1 || calls[1].Prompt.Results[0].CallID != tc.ID {
		t.Fatalf("second prompt's results %+v", calls[1].Prompt.Results)
	}
}

func TestAnthropicSDKToolLoop(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "json"}[stream], func(t *testing.T) {
			m, srv := scripted(t)
			route := statusRoute(t)
			client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("sk-ant-fake"), anthropicoption.WithMaxRetries(0))
			params := anthropic.MessageNewParams{
				Model: "claude-fake", MaxTokens: 1024,
				System:   []anthropic.TextBlockParam{{Text: "You are the support agent."}},
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Did the deploy go out?"))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "lookup",
					InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"q": map[string]any{"type": "string"}}}}}},
			}
			var answer, routeAnswer string
			for turn := 0; turn < 3 && answer == ""; turn++ {
				var msg anthropic.Message
				if stream {
					s := client.Messages.NewStreaming(context.Background(), params)
					for s.Next() {
						if err := msg.Accumulate(s.Current()); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
				} else {
					got, err := client.Messages.New(context.Background(), params)
					if err != nil {
						t.Fatal(err)
					}
					msg = *got
				}
				params.Messages = append(params.Messages, msg.ToParam())
				var results []anthropic.ContentBlockParamUnion
				for _, block := range msg.Content {
					switch block.Type {
					case "tool_use":
						routeAnswer = lookup(t, route.URL, block.Input)
						results = append(results, anthropic.NewToolResultBlock(block.ID, routeAnswer, false))
					case "text":
						if msg.StopReason == anthropic.StopReasonEndTurn {
							answer = block.Text
						}
					}
				}
				if len(results) > 0 {
					if msg.StopReason != anthropic.StopReasonToolUse {
						t.Fatalf("stop reason %q with tool calls", msg.StopReason)
					}
					params.Messages = append(params.Messages, anthropic.NewUserMessage(results...))
				}
			}
			checkLoop(t, m, routeAnswer, answer)
		})
	}
}

func TestOpenAIChatSDKToolLoop(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "json"}[stream], func(t *testing.T) {
			m, srv := scripted(t)
			route := statusRoute(t)
			client := openai.NewClient(openaioption.WithBaseURL(srv.URL+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(0))
			params := openai.ChatCompletionNewParams{
				Model: "gpt-fake",
				Messages: []openai.ChatCompletionMessageParamUnion{
					openai.SystemMessage("You are the support agent."), openai.UserMessage("Did the deploy go out?")},
				Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
					Name: "lookup", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}})},
			}
			if stream {
				params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			var answer, routeAnswer string
			for turn := 0; turn < 3 && answer == ""; turn++ {
				var choice openai.ChatCompletionChoice
				if stream {
					s := client.Chat.Completions.NewStreaming(context.Background(), params)
					var acc openai.ChatCompletionAccumulator
					for s.Next() {
						acc.AddChunk(s.Current())
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					if acc.Usage.TotalTokens == 0 {
						t.Error("no usage in the stream")
					}
					choice = acc.Choices[0]
				} else {
					got, err := client.Chat.Completions.New(context.Background(), params)
					if err != nil {
						t.Fatal(err)
					}
					choice = got.Choices[0]
				}
				params.Messages = append(params.Messages, choice.Message.ToParam())
				for _, call := range choice.Message.ToolCalls {
					routeAnswer = lookup(t, route.URL, []byte(call.Function.Arguments))
					params.Messages = append(params.Messages, openai.ToolMessage(routeAnswer, call.ID))
				}
				if choice.FinishReason == "stop" {
					answer = choice.Message.Content
				}
			}
			checkLoop(t, m, routeAnswer, answer)
		})
	}
}

func TestOpenAIResponsesSDKToolLoop(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "json"}[stream], func(t *testing.T) {
			m, srv := scripted(t)
			route := statusRoute(t)
			client := openai.NewClient(openaioption.WithBaseURL(srv.URL+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(0))
			input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage("Did the deploy go out?", responses.EasyInputMessageRoleUser)}
			params := responses.ResponseNewParams{
				Model:        "gpt-fake",
				Instructions: openai.String("You are the support agent."),
				Tools:        []responses.ToolUnionParam{responses.ToolParamOfFunction("lookup", map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}, false)},
			}
			var answer, routeAnswer string
			for turn := 0; turn < 3 && answer == ""; turn++ {
				params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
				var resp responses.Response
				if stream {
					s := client.Responses.NewStreaming(context.Background(), params)
					var deltas strings.Builder
					for s.Next() {
						switch ev := s.Current(); ev.Type {
						case "response.output_text.delta":
							deltas.WriteString(ev.Delta)
						case "response.completed":
							resp = ev.AsResponseCompleted().Response
						}
					}
					if err := s.Err(); err != nil {
						t.Fatal(err)
					}
					if resp.OutputText() != deltas.String() {
						t.Fatalf("deltas %q; completed output %q", deltas.String(), resp.OutputText())
					}
				} else {
					got, err := client.Responses.New(context.Background(), params)
					if err != nil {
						t.Fatal(err)
					}
					resp = *got
				}
				calls := 0
				for _, item := range resp.Output {
					if item.Type != "function_call" {
						continue
					}
					calls++
					fc := item.AsFunctionCall()
					callParam := fc.ToParam()
					input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCall: &callParam})
					routeAnswer = lookup(t, route.URL, []byte(fc.Arguments))
					out := responses.ResponseInputItemParamOfFunctionCallOutput(routeAnswer)
					out.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
					input = append(input, out)
				}
				if calls == 0 {
					answer = resp.OutputText()
				}
			}
			checkLoop(t, m, routeAnswer, answer)
		})
	}
}

// Anthropic's current structured output is output_config.format; the
// schema there is the one the answer is checked against.
func TestAnthropicSDKStructuredOutput(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	router := fakeai.Agent{Name: "router", Purpose: "structured"}
	m.Respond(router, fakeai.Output(map[string]string{"team": "billing"}), fakeai.Output(map[string]string{"team": "sales"}))
	srv := httptest.NewServer(m)
	defer srv.Close()
	client := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL), anthropicoption.WithAPIKey("sk-ant-fake"), anthropicoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model: "claude-fake", MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("my invoice is wrong"))},
		OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: map[string]any{
			"type": "object", "required": []string{"team"}, "additionalProperties": false,
			"properties": map[string]any{"team": map[string]any{"enum": []string{"support", "billing"}}}}}},
	}
	msg, err := client.Messages.New(context.Background(), params)
	if err != nil || len(msg.Content) != 1 || msg.Content[0].Text != `{"team":"billing"}` {
		t.Fatalf("a valid output: %+v %v", msg, err)
	}
	if got := m.Calls(router); len(got) != 1 || !strings.Contains(string(got[0].Prompt.Schema), "billing") {
		t.Fatalf("the prompt's schema was not read: %+v", got)
	}
	if said := rec.said(); len(said) != 0 {
		t.Fatalf("a valid output failed the test: %q", said)
	}
	if _, err := client.Messages.New(context.Background(), params); err == nil {
		t.Fatal("an output that breaks the schema was answered")
	}
	if said := rec.said(); len(said) != 1 || !strings.Contains(said[0], "does not fit the request's schema") {
		t.Fatalf("failures %q", said)
	}
	rec.cleanup()
}
