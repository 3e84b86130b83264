package control

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/proxy"
)

func TestControlFaults(t *testing.T) {
	up := echo(t)
	p, hc := front(t, up, proxy.ModePassthrough, t.TempDir(), proxy.Rule{Name: "model", URLPrefix: up.URL + "/v1/"})
	ctl := newControl(t, p, "tok")
	do := func(method, body string) int {
		code, _ := ctl.do(method, "/v1/faults", body)
		return code
	}
	if code := do("POST", `{"kind":"explode"}`); code != http.StatusBadRequest {
		t.Fatalf("unknown kind: %d", code)
	}
	if code := do("POST", `{"kind":"reject_model_request"}`); code != http.StatusCreated {
		t.Fatalf("add: %d", code)
	}
	resp, err := hc.Post(up.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-test"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 529 {
		t.Fatalf("status %d; want 529", resp.StatusCode)
	}
	do("POST", `{"kind":"reject_model_request","times":-1}`)
	if code := do("DELETE", ""); code != http.StatusNoContent || len(p.Faults()) != 0 {
		t.Fatalf("delete: %d, left %d", code, len(p.Faults()))
	}
}
