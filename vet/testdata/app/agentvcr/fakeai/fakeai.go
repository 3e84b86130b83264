// Package fakeai stands in for agentvcr's scripted model.
package fakeai

import (
	"net/http"
	"testing"
)

type Model struct{}

type Response struct{ Text string }

type Server struct{}

func New(t testing.TB) *Model { return &Model{} }

func NewModel(fail func(string)) *Model { return &Model{} }

func NewServer(t testing.TB) *Server { return &Server{} }

func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {}

func (m *Model) Respond(name string, rs ...Response) {}

func (s *Server) Transport() http.RoundTripper { return nil }

func Text(s string) Response { return Response{Text: s} }
