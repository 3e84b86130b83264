package proxy

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// inProcess serves req with h in this process and returns its response as
// a client would see it: the status and headers once h sets them, and a
// body that streams as h writes it. A consumer that stops reading and
// closes the body makes h's writes fail, so h returns.
func inProcess(h http.Handler, req *http.Request) *http.Response {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	go func() {
		h.ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	<-w.ready
	return &http.Response{Status: fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)), StatusCode: w.status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.sent, Body: pr, ContentLength: -1, Request: req}
}

// pipeWriter is the http.ResponseWriter inProcess gives its handler.
type pipeWriter struct {
	header http.Header
	sent   http.Header // the header as it was when written
	body   *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status, w.sent = status, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Flush is a no-op: a pipe hands each write to the reader as it comes.
func (w *pipeWriter) Flush() {}
