package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Rubric is what a good answer does (Pass) and what fails it (Fail).
type Rubric struct {
	Pass []string
	Fail []string
}

// Case is what a judge assesses.
type Case struct {
	// Earlier is the conversation before the call, as "role: text"
	// lines; Transcript is the call's.
	Earlier, Transcript string
}

// Verdict is a judge's answer.
type Verdict struct {
	Answer    string  `json:"answer"` // A to E
	Score     float64 `json:"score"`
	Rationale string  `json:"rationale"`
}

// Judge assesses a case.
type Judge interface {
	Name() string
	Assess(ctx context.Context, c Case) (Verdict, error)
}

// DefaultModel is the judge model, on another provider than the agent's,
// as Junior's fixture chooses.
const DefaultModel = "openai/gpt-5.4"

// RubricJudge asks a model, over the OpenAI Chat Completions API of the
// gateway, whether the transcript meets the rubric. It sends one request,
// with a JSON schema for the answer, and no SDK: the recorder, which
// serves the fixture and so its judges, links no model SDK.
type RubricJudge struct {
	Rubric Rubric
	// Model is the judge model; empty means DefaultModel.
	Model string
	// BaseURL is the gateway's OpenAI-compatible base, such as
	// https://ai-gateway.vercel.sh/v1; APIKey authenticates to it.
	BaseURL, APIKey string
	// HTTP sends the request (through the proxy in tests).
	HTTP *http.Client
}

// Name names the judge in reports.
func (j *RubricJudge) Name() string { return "rubric" }

// System is the judge's system prompt.
const System = "You are a strict evaluator of an AI assistant's replies. Read the earlier conversation for context, " +
	"then judge only the transcript against the criteria. Answer with JSON: " +
	`{"answer": "A"|"B"|"C"|"D"|"E", "rationale": "..."}` +
	". A: every Pass criterion holds and no Fail criterion does. B: minor gaps. C: some Pass criteria miss. " +
	"D: most miss. E: a Fail criterion holds, or none of the Pass criteria do."

// Prompt is the user message the judge gets.
func Prompt(r Rubric, c Case) string {
	var b strings.Builder
	b.WriteString("<earlier_conversation>\n" + c.Earlier + "\n</earlier_conversation>\n\n")
	b.WriteString("<transcript>\n" + c.Transcript + "\n</transcript>\n\n<criteria>\n")
	for _, p := range r.Pass {
		b.WriteString("- Pass: " + p + "\n")
	}
	for _, f := range r.Fail {
		b.WriteString("- Fail: " + f + "\n")
	}
	b.WriteString("</criteria>")
	return b.String()
}

var schema = map[string]any{"type": "object", "additionalProperties": false, "required": []string{"answer", "rationale"},
	"properties": map[string]any{"answer": map[string]any{"enum": []string{"A", "B", "C", "D", "E"}}, "rationale": map[string]any{"type": "string"}}}

// Assess asks the judge model.
func (j *RubricJudge) Assess(ctx context.Context, c Case) (Verdict, error) {
	if len(j.Rubric.Pass)+len(j.Rubric.Fail) == 0 {
		return Verdict{}, errors.New("judge: the rubric has no criteria")
	}
	model := j.Model
	if model == "" {
		model = DefaultModel
	}
	body, err := json.Marshal(map[string]any{
		"model":       model,
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": System},
			{"role": "user", "content": Prompt(j.Rubric, c)},
		},
		"response_format": map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "verdict", "schema": schema, "strict": true}},
	})
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(j.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+j.APIKey)
	client := j.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Verdict{}, fmt.Errorf("judge: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return Verdict{}, fmt.Errorf("judge: POST %s: %d %s: %.300s", req.URL.Redacted(), resp.StatusCode, http.StatusText(resp.StatusCode), raw)
	}
	var answer struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return Verdict{}, fmt.Errorf("judge: the answer is not a chat completion: %w: %.200q", err, raw)
	}
	if len(answer.Choices) == 0 {
		return Verdict{}, errors.New("judge: the judge model answered no choice")
	}
	return Parse(answer.Choices[0].Message.Content)
}

// maxAnswer bounds the judge model's answer read: a verdict is small.
const maxAnswer = 4 << 20

var scores = map[string]float64{"A": 1, "B": 0.75, "C": 0.5, "D": 0.25, "E": 0}

// Parse reads a judge's answer. Anything but {"answer": A–E,
// "rationale"} is an error.
func Parse(text string) (Verdict, error) {
	var v Verdict
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return Verdict{}, fmt.Errorf("judge: the answer is not {\"answer\", \"rationale\"} JSON: %w: %.200q", err, text)
	}
	if dec.More() {
		return Verdict{}, fmt.Errorf("judge: text after the JSON answer: %.200q", text)
	}
	score, ok := scores[v.Answer]
	if !ok {
		return Verdict{}, fmt.Errorf("judge: answer %q is not one of A, B, C, D, E", v.Answer)
	}
	if strings.TrimSpace(v.Rationale) == "" {
		return Verdict{}, errors.New("judge: the answer has no rationale")
	}
	v.Score = score
	return v, nil
}
