package fakeai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/proxy/wire"
)

// media holds what is scripted for embeddings and images, and what was
// asked.
type media struct {
	vectors [][]float32
	embed   func(value string) []float32
	images  [][]byte
	embeds  []Embedding
	drawn   []ImageCall
}

// RespondEmbeddings queues vectors, one for each value embedded, however
// the client batches the values.
func (m *Model) RespondEmbeddings(vectors ...[]float32) {
	m.mu.Lock()
	m.media.vectors = append(m.media.vectors, vectors...)
	m.mu.Unlock()
}

// RespondEmbeddingsFunc answers every value embedded with f's vector,
// once the queued vectors are used.
func (m *Model) RespondEmbeddingsFunc(f func(value string) []float32) {
	m.mu.Lock()
	m.media.embed = f
	m.mu.Unlock()
}

// RespondImages queues images (PNG, JPEG... as the client expects), one
// for each image generated.
func (m *Model) RespondImages(images ...[]byte) {
	m.mu.Lock()
	m.media.images = append(m.media.images, images...)
	m.mu.Unlock()
}

// Embedding is one embeddings request: the values and the vectors given.
type Embedding struct {
	Model   string      `json:"model"`
	Values  []string    `json:"values"`
	Vectors [][]float32 `json:"vectors"`
}

// ImageCall is one image request: its prompt and the images given.
type ImageCall struct {
	Model  string   `json:"model"`
	Prompt string   `json:"prompt"`
	N      int      `json:"n"`
	Size   string   `json:"size,omitempty"`
	Images [][]byte `json:"images"` // base64 in JSON
}

// EmbedCalls returns the embeddings requests, in order.
func (m *Model) EmbedCalls() []Embedding {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Embedding{}, m.media.embeds...)
}

// ImageCalls returns the image requests, in order.
func (m *Model) ImageCalls() []ImageCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ImageCall{}, m.media.drawn...)
}

// AssertEmbedded fails the test unless a value embedded satisfies pred.
func (m *Model) AssertEmbedded(pred func(value string) bool) {
	if m.t != nil {
		m.t.Helper()
	}
	for _, e := range m.EmbedCalls() {
		if slices.ContainsFunc(e.Values, pred) {
			return
		}
	}
	m.errorf("fakeai: none of the values embedded is the one asserted (%d embeddings requests)", len(m.EmbedCalls()))
}

// AssertNeverEmbedded fails the test if anything was embedded.
func (m *Model) AssertNeverEmbedded() {
	if m.t != nil {
		m.t.Helper()
	}
	if e := m.EmbedCalls(); len(e) > 0 {
		m.errorf("fakeai: %d embeddings requests; want none (first: %q)", len(e), clip(strings.Join(e[0].Values, " | ")))
	}
}

// AssertGeneratedImage fails the test unless an image was asked for with
// a prompt that satisfies pred.
func (m *Model) AssertGeneratedImage(pred func(prompt string) bool) {
	if m.t != nil {
		m.t.Helper()
	}
	calls := m.ImageCalls()
	if !slices.ContainsFunc(calls, func(c ImageCall) bool { return pred(c.Prompt) }) {
		m.errorf("fakeai: none of the %d image requests is the one asserted", len(calls))
	}
}

// AssertNeverGeneratedImage fails the test if an image was asked for.
func (m *Model) AssertNeverGeneratedImage() {
	if m.t != nil {
		m.t.Helper()
	}
	if c := m.ImageCalls(); len(c) > 0 {
		m.errorf("fakeai: %d image requests; want none (first: %q)", len(c), clip(c[0].Prompt))
	}
}

// mediaProblemsLocked is what is left unused of the media scripts.
func (m *Model) mediaProblemsLocked() []string {
	var out []string
	if n := len(m.media.vectors); n > 0 {
		out = append(out, fmt.Sprintf("fakeai: %d scripted embedding vectors never asked for: the app stopped before embedding them", n))
	}
	if n := len(m.media.images); n > 0 {
		out = append(out, fmt.Sprintf("fakeai: %d scripted images never asked for: the app stopped before generating them", n))
	}
	return out
}

// isEmbeddings and isImages tell the media routes by path.
func isEmbeddings(path string) bool {
	return strings.HasSuffix(path, "/embeddings") || strings.HasSuffix(path, "/embedding-model")
}

func isImages(path string) bool {
	return strings.HasSuffix(path, "/images/generations") || strings.HasSuffix(path, "/image-model")
}

// serveEmbeddings answers OpenAI's /v1/embeddings and the AI SDK's
// /embedding-model.
func (m *Model) serveEmbeddings(w http.ResponseWriter, r *http.Request, body []byte) {
	j := gjson.ParseBytes(body)
	aisdk := strings.HasSuffix(r.URL.Path, "/embedding-model")
	e := Embedding{Model: j.Get("model").String(), Values: []string{}, Vectors: [][]float32{}}
	input := j.Get("input")
	if aisdk {
		e.Model, input = r.Header.Get("ai-model-id"), j.Get("values")
	}
	if input.IsArray() {
		for _, v := range input.Array() {
			e.Values = append(e.Values, v.String())
		}
	} else {
		e.Values = []string{input.String()}
	}
	m.mu.Lock()
	for _, v := range e.Values {
		switch {
		case len(m.media.vectors) > 0:
			e.Vectors = append(e.Vectors, m.media.vectors[0])
			m.media.vectors = m.media.vectors[1:]
		case m.media.embed != nil:
			e.Vectors = append(e.Vectors, m.media.embed(v))
		}
	}
	if len(e.Vectors) < len(e.Values) {
		m.media.vectors = append(e.Vectors, m.media.vectors...) // give back a partial draw
		m.mu.Unlock()
		m.report(fmt.Sprintf("fakeai: unscripted embeddings (%d values, %d vectors scripted): %q", len(e.Values), len(e.Vectors), clip(strings.Join(e.Values, " | "))))
		d := wire.OpenAIChat
		if aisdk {
			d = wire.AISDK
		}
		writeError(w, d, http.StatusServiceUnavailable, "fakeai: no scripted embedding for these values", false)
		return
	}
	m.media.embeds = append(m.media.embeds, e)
	m.mu.Unlock()
	tokens := 0
	for _, v := range e.Values {
		tokens += len(v)/4 + 1
	}
	if aisdk {
		writeJSON(w, http.StatusOK, obj{{"embeddings", e.Vectors}, {"usage", obj{{"tokens", tokens}}}, {"warnings", []any{}}})
		return
	}
	base64Format := j.Get("encoding_format").String() == "base64"
	var data []any
	for i, v := range e.Vectors {
		var emb any = v
		if base64Format {
			var b bytes.Buffer
			for _, f := range v {
				binary.Write(&b, binary.LittleEndian, math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b.Bytes())
		}
		data = append(data, obj{{"object", "embedding"}, {"index", i}, {"embedding", emb}})
	}
	writeJSON(w, http.StatusOK, obj{{"object", "list"}, {"model", e.Model}, {"data", data},
		{"usage", obj{{"prompt_tokens", tokens}, {"total_tokens", tokens}}}})
}

// drawImages takes n scripted images for a request, or says why not.
func (m *Model) drawImages(c ImageCall) (ImageCall, bool) {
	m.mu.Lock()
	if len(m.media.images) < c.N {
		m.mu.Unlock()
		m.report(fmt.Sprintf("fakeai: unscripted image request (%d images asked, %d scripted): %q", c.N, len(m.media.images), clip(c.Prompt)))
		return c, false
	}
	c.Images = slices.Clone(m.media.images[:c.N])
	m.media.images = m.media.images[c.N:]
	m.media.drawn = append(m.media.drawn, c)
	m.mu.Unlock()
	return c, true
}

// serveImages answers OpenAI's /v1/images/generations and the AI SDK's
// /image-model.
func (m *Model) serveImages(w http.ResponseWriter, r *http.Request, body []byte) {
	j := gjson.ParseBytes(body)
	aisdk := strings.HasSuffix(r.URL.Path, "/image-model")
	c := ImageCall{Model: j.Get("model").String(), Prompt: j.Get("prompt").String(), N: int(j.Get("n").Int()), Size: j.Get("size").String()}
	if aisdk {
		c.Model = r.Header.Get("ai-model-id")
	}
	if c.N == 0 {
		c.N = 1
	}
	c, ok := m.drawImages(c)
	d := wire.OpenAIChat
	if aisdk {
		d = wire.AISDK
	}
	if !ok {
		writeError(w, d, http.StatusServiceUnavailable, "fakeai: no scripted image for this prompt", false)
		return
	}
	var encoded []string
	for _, img := range c.Images {
		encoded = append(encoded, base64.StdEncoding.EncodeToString(img))
	}
	if aisdk {
		writeJSON(w, http.StatusOK, obj{{"images", encoded}, {"warnings", []any{}}})
		return
	}
	var data []any
	for _, e := range encoded {
		data = append(data, obj{{"b64_json", e}})
	}
	writeJSON(w, http.StatusOK, obj{{"created", time.Now().Unix()}, {"data", data},
		{"usage", obj{{"total_tokens", 0}, {"input_tokens", len(c.Prompt)/4 + 1}, {"output_tokens", 0}}}})
}

// chatImages answers a Chat Completions request for image output
// (modalities ["image"], as the AI gateway takes it): the message carries
// the images as data URLs.
func (m *Model) chatImages(ctx context.Context, w http.ResponseWriter, p *Prompt) {
	c, ok := m.drawImages(ImageCall{Model: p.Model, Prompt: p.LastUser(), N: 1})
	if !ok {
		writeError(w, wire.OpenAIChat, http.StatusServiceUnavailable, "fakeai: no scripted image for this prompt", false)
		return
	}
	var images []any
	for _, img := range c.Images {
		images = append(images, obj{{"type", "image_url"}, {"image_url", obj{{"url", "data:" + http.DetectContentType(img) + ";base64," + base64.StdEncoding.EncodeToString(img)}}}})
	}
	id, created := "chatcmpl-fake-image", time.Now().Unix()
	if !p.Stream {
		writeJSON(w, http.StatusOK, obj{{"id", id}, {"object", "chat.completion"}, {"created", created}, {"model", modelOf(p)},
			{"choices", []any{obj{{"index", 0}, {"message", obj{{"role", "assistant"}, {"content", ""}, {"refusal", nil}, {"images", images}}},
				{"logprobs", nil}, {"finish_reason", "stop"}}}}, {"usage", obj{{"prompt_tokens", tokens(p.Size)}, {"completion_tokens", 0}, {"total_tokens", tokens(p.Size)}}}})
		return
	}
	s := newStream(ctx, w)
	chunk := func(delta obj, finish any) obj {
		return obj{{"id", id}, {"object", "chat.completion.chunk"}, {"created", created}, {"model", modelOf(p)},
			{"choices", []any{obj{{"index", 0}, {"delta", delta}, {"logprobs", nil}, {"finish_reason", finish}}}}}
	}
	s.event("", chunk(obj{{"role", "assistant"}, {"content", ""}}, nil))
	s.event("", chunk(obj{{"images", images}}, nil))
	s.event("", chunk(obj{}, "stop"))
	s.done()
}
