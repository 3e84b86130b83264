package cassette_test

import (
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/proxy/cassette"
)

var update = flag.Bool("update", false, "write testdata/recorded.yaml again, with the keys the current code computes")

// recordedMatcher is the matcher testdata/recorded.yaml was recorded with:
// a model rule's key headers, one value of its own, then the defaults, as
// the proxy builds it.
func recordedMatcher() *cassette.Matcher {
	return &cassette.Matcher{
		KeyHeaders: []string{"ai-language-model-id", "ai-language-model-streaming"},
		Values:     append([]cassette.Value{{Name: "request-id", Re: regexp.MustCompile(`req_[a-z0-9]+`)}}, cassette.DefaultValues()...),
	}
}

// recordedRequests are the requests of testdata/recorded.yaml: the model
// dialects, Slack's forms, web reads, and the corners of the canonical
// form (escapes, duplicate keys, top-level arrays and scalars, bodies that
// are not JSON, credentials that redaction takes out).
func recordedRequests() []cassette.Request {
	// Built here so that no token shape is in git: the cassette holds
	// them redacted.
	r := strings.Repeat
	openai := "sk-" + "proj-" + r("Ab3", 14)
	anthropic := "sk-" + "ant-api03-" + r("Zq7_", 10)
	slack := "xox" + "b-1234567890123-" + r("a1B2", 6)
	github := "gh" + "p_" + r("k9Lm", 10)

	var long strings.Builder
	long.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":4096,"stream":true,"system":"You are Junior.\nToday is 2026-11-29T12:00:00Z.","messages":[`)
	for i := range 40 {
		fmt.Fprintf(&long, `{"role":"user","content":[{"type":"text","text":"check run %d \u2014 caf\u00e9 \ud83d\ude00"}]},`, i)
		fmt.Fprintf(&long, `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%04d","name":"webFetch","input":{"url":"https:\/\/example.com\/runs\/%d"}}]},`, i, i)
		fmt.Fprintf(&long, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":"{\"status\":\"failed\",\"id\":\"3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f%04d\",\"at\":17900000%05d}"}]},`, i, i, i)
	}
	long.WriteString(`{"role":"user","content":"thanks"}]}`)

	json := func(method, url, body string, headers ...string) cassette.Request {
		return cassette.Req(method, url, body, append([]string{"Content-Type", "application/json"}, headers...)...)
	}
	return []cassette.Request{
		json("POST", "https://api.anthropic.com/v1/messages", long.String(), "x-api-key", anthropic, "anthropic-version", "2023-06-01"),
		json("POST", "https://api.anthropic.com/v1/messages",
			`{"model":"claude-haiku-4-5","max_tokens":1024,"messages":[{"role":"user","content":"My key is `+anthropic+`, is it safe?"}]}`),
		json("POST", "https://api.openai.com/v1/chat/completions",
			`{"model":"gpt-5","temperature":0.7,"top_p":1.0,"seed":-0,"penalty":1e-3,"big":12345678901234567890,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Quote: \"<a href='x'>&amp;</a>\"\tdone"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"number"}}}}}}`,
			"Authorization", "Bearer "+openai),
		json("POST", "https://api.openai.com/v1/responses",
			"{\n  \"model\": \"gpt-5\",\n  \"input\": [\n    {\"role\": \"user\", \"content\": \"here is my token: "+github+"\"}\n  ],\r\n\t\"store\": false\n}\n",
			"Authorization", "Bearer "+openai),
		json("POST", "https://ai-gateway.vercel.sh/v3/ai/language-model",
			`{"prompt":[{"role":"system","content":"You are Junior."},{"role":"user","content":[{"type":"text","text":"hi at 2026-11-29T12:00:00.123+01:00, ts 1790000000123"}]}],"maxOutputTokens":2048,"tools":[{"type":"function","name":"search","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}}]}`,
			"ai-language-model-id", "anthropic/claude-sonnet-4.5", "ai-language-model-streaming", "true", "Authorization", "Bearer "+openai),
		json("POST", "https://ai-gateway.vercel.sh/v3/ai/language-model",
			`{"prompt":[{"role":"user","content":[{"type":"text","text":"again"}]}],"providerOptions":{"gateway":{"order":["bedrock","anthropic"]}},"headers":{"x-request":"req_9f8e7d"}}`,
			"ai-language-model-id", "openai/gpt-5", "ai-language-model-streaming", "false"),
		cassette.Req("POST", "https://slack.com/api/chat.postMessage", "token="+slack+"&channel=C0123ABCD&text=Deploy+finished+at+2026-11-29T12%3A00%3A00Z",
			"Content-Type", "application/x-www-form-urlencoded"),
		cassette.Req("POST", "https://slack.com/api/conversations.replies", "channel=C0123ABCD&ts=1790000000.123456",
			"Content-Type", "application/x-www-form-urlencoded; charset=utf-8", "Authorization", "Bearer "+slack),
		cassette.Req("GET", "https://api.github.com/repos/acme/widgets/issues?state=open&per_page=50&page=2", "", "Authorization", "token "+github),
		cassette.Req("GET", "https://Example.COM/search?q=deploy+log&sid=abc123&access_token=plain&b=2&a=1#frag", ""),
		cassette.Req("GET", "https://user:pass@example.com/private/3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b", ""),
		json("POST", "https://api.example.com/batch", `[{"b":1,"a":[true,false,null]},"x",3.50,{"z":{"y":{"x":{}}}},[]]`),
		json("POST", "https://api.example.com/scalar", `"just a string with \u00e9 and \/ and \u001F"`),
		json("POST", "https://api.example.com/scalar", `  42  `),
		json("POST", "https://api.example.com/dup", `{"a":1,"b":{"y":2,"x":3,"y":4},"a":{"k":"v"},"\u0061":"last"}`),
		json("POST", "https://api.example.com/escapes", `{"ctl":"\u0000\u0008\b\f\n\r\t\u007f\u001f","sep":"\u2028 and \u2029 raw:`+"\u2028"+`","html":"<>&","pair":"\ud83d\ude00","lone":"\ud800 x \udc00","keys":{"\n":1,"é":2,"e":3,"E":4}}`),
		json("POST", "https://api.example.com/trailing", `{"a":1} {"b":2}`),
		json("POST", "https://api.example.com/trailing", `{"b":2,"a":1}]`),
		json("POST", "https://api.example.com/broken", `{"a":1,}`),
		cassette.Req("POST", "https://api.example.com/text", "plain text, id 3f1c9a0b-2d3e-4f50-8a6b-7c8d9e0f1a2b, at 2026-11-29T12:00:00Z\n", "Content-Type", "text/plain"),
		json("POST", "https://api.example.com/deep", r(`{"n":[`, 60)+`0`+r(`]}`, 60)),
		cassette.Req("POST", "https://api.example.com/empty", ""),
		json("PUT", "https://api.example.com/v1/items/req_abc123?at=2026-11-29T12:00:00Z", `{"id":"req_abc123","when":1790000000123,"note":"sk-short"}`),
	}
}

// TestRecordedKeysStillMatch loads a cassette recorded as the proxy
// records (redacted, then indexed, which stores each key) and checks that
// every stored key is still the key of its request: a change of the
// canonical form would leave every existing cassette unmatched.
func TestRecordedKeysStillMatch(t *testing.T) {
	path := filepath.Join("testdata", "recorded.yaml")
	m := recordedMatcher()
	if *update {
		c := &cassette.Cassette{}
		x := cassette.NewIndex()
		for i, r := range recordedRequests() {
			in := &cassette.Interaction{ID: i, Request: r, Rule: "model",
				Response: cassette.Response{Code: 200, Status: "200 OK", Headers: http.Header{"Content-Type": {"application/json"}}, Body: `{"ok":true}`}}
			if err := cassette.Prepare(in); err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			x.Add(m, in)
			c.Interactions = append(c.Interactions, in)
		}
		if err := c.Write(path); err != nil {
			t.Fatal(err)
		}
	}
	c, err := cassette.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) == 0 {
		t.Fatal("no interactions")
	}
	for _, in := range c.Interactions {
		if in.Key == "" {
			t.Errorf("interaction %d stores no key", in.ID)
			continue
		}
		if key := m.Key(&in.Request); key != in.Key {
			t.Errorf("interaction %d (%s %s): key %s; the cassette stores %s", in.ID, in.Request.Method, in.Request.URL, key, in.Key)
		}
	}
}
