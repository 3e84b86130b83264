package fakeai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"

	"github.com/agentvcr/agentvcr/fakeai"
)

// png is the smallest valid PNG image: one transparent pixel.
var png, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")

func TestEmbeddingsOneVectorPerValueHoweverBatched(t *testing.T) {
	m := fakeai.New(t)
	m.RespondEmbeddings([]float32{1, 0}, []float32{0, 1}, []float32{0.5, 0.5})
	m.RespondEmbeddingsFunc(func(v string) []float32 { return []float32{float32(len(v)), 0} })
	srv := httptest.NewServer(m)
	defer srv.Close()
	client := openai.NewClient(openaioption.WithBaseURL(srv.URL+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(0))

	// Two values in one batch, then one alone, in both encodings.
	for _, tt := range []struct {
		input  []string
		format openai.EmbeddingNewParamsEncodingFormat
		want   [][]float64
	}{
		{[]string{"alpha", "beta"}, openai.EmbeddingNewParamsEncodingFormatFloat, [][]float64{{1, 0}, {0, 1}}},
		{[]string{"gamma"}, openai.EmbeddingNewParamsEncodingFormatBase64, [][]float64{{0.5, 0.5}}},
		{[]string{"delta!"}, openai.EmbeddingNewParamsEncodingFormatFloat, [][]float64{{6, 0}}}, // the func, once the queue is used
	} {
		resp, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "text-embedding-fake",
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: tt.input}, EncodingFormat: tt.format})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Data) != len(tt.want) {
			t.Fatalf("%v: %d vectors", tt.input, len(resp.Data))
		}
		for i, d := range resp.Data {
			if !equal(d.Embedding, tt.want[i]) {
				t.Fatalf("%v (%s): vector %d is %v; want %v", tt.input, tt.format, i, d.Embedding, tt.want[i])
			}
		}
	}
	// The AI SDK's embedding-model route.
	req, _ := http.NewRequest("POST", srv.URL+"/v3/ai/embedding-model", strings.NewReader(`{"values":["epsilon"]}`))
	req.Header.Set("ai-model-id", "openai/text-embedding-fake")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Embeddings [][]float64 }
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if len(got.Embeddings) != 1 || !equal(got.Embeddings[0], []float64{7, 0}) {
		t.Fatalf("ai sdk embeddings %v", got)
	}
	calls := m.EmbedCalls()
	if len(calls) != 4 || calls[0].Model != "text-embedding-fake" || strings.Join(calls[0].Values, ",") != "alpha,beta" || calls[3].Model != "openai/text-embedding-fake" {
		t.Fatalf("embed calls %+v", calls)
	}
	m.AssertEmbedded(func(v string) bool { return v == "gamma" })
	m.AssertNeverGeneratedImage()
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestImages(t *testing.T) {
	m := fakeai.New(t)
	m.RespondImages(png, png)
	srv := httptest.NewServer(m)
	defer srv.Close()
	client := openai.NewClient(openaioption.WithBaseURL(srv.URL+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(0))
	resp, err := client.Images.Generate(context.Background(), openai.ImageGenerateParams{Prompt: "a lighthouse at dusk", Model: "gpt-image-fake"})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := base64.StdEncoding.DecodeString(resp.Data[0].B64JSON); !bytes.Equal(b, png) {
		t.Fatalf("image %q", resp.Data[0].B64JSON)
	}
	// Chat completions with image output, as the AI gateway takes it.
	r, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"google/gemini-fake-image","modalities":["text","image"],"messages":[{"role":"user","content":"draw a harbour"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var chat struct {
		Choices []struct {
			Message struct {
				Images []struct {
					ImageURL struct{ URL string } `json:"image_url"`
				}
			}
		}
	}
	json.NewDecoder(r.Body).Decode(&chat)
	r.Body.Close()
	if len(chat.Choices) != 1 || len(chat.Choices[0].Message.Images) != 1 ||
		chat.Choices[0].Message.Images[0].ImageURL.URL != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("chat image %+v", chat)
	}
	m.AssertGeneratedImage(func(p string) bool { return strings.Contains(p, "lighthouse") })
	m.AssertGeneratedImage(func(p string) bool { return p == "draw a harbour" })
	m.AssertNeverEmbedded()
}

func TestUnscriptedAndUnusedMediaFailTheTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	m := fakeai.New(rec)
	m.RespondEmbeddings([]float32{1})
	m.RespondImages(png, png)
	srv := httptest.NewServer(m)
	defer srv.Close()
	client := openai.NewClient(openaioption.WithBaseURL(srv.URL+"/v1/"), openaioption.WithAPIKey("sk-fake"), openaioption.WithMaxRetries(2))
	// Two values, one vector: the request fails once and the vector is
	// still there for the next.
	_, err := client.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "e",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"one", "two"}}})
	if err == nil {
		t.Fatal("two values with one vector scripted were answered")
	}
	if said := rec.said(); len(said) != 1 || !strings.Contains(said[0], "unscripted embeddings (2 values, 1 vectors scripted)") {
		t.Fatalf("failures %q", said)
	}
	at := rec.cleanup()
	if len(at) != 3 || !strings.Contains(at[1], "1 scripted embedding vectors never asked for") || !strings.Contains(at[2], "2 scripted images never asked for") {
		t.Fatalf("failures at cleanup %q", at)
	}
}
