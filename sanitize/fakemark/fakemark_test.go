package fakemark

import "testing"

func TestSlackID(t *testing.T) {
	for _, body := range []string{"U0", "U0ABC", "U0ABCDEF12", "C07QWERTY99"} {
		n := SlackIDChecks(len(body) + 2)
		if n == 1 {
			n = SlackIDChecks(len(body) + 1)
		}
		id := body + SlackIDCheck(body, n)
		if !SlackID(id) {
			t.Errorf("%s: a marked id is not taken for a fake", id)
		}
		// One character changed: an original, which the check tells apart.
		b := []byte(id)
		b[1] ^= 1
		if SlackID(string(b)) {
			t.Errorf("%s: changed, still a fake", b)
		}
	}
	if SlackID("U0") {
		t.Error("too short to carry a mark")
	}
}

func TestWorkspace(t *testing.T) {
	base := "lopez-3f"
	ws := base + WorkspaceCheck(base)
	if !Workspace(ws) {
		t.Errorf("%s: a marked workspace is not taken for a fake", ws)
	}
	for _, real := range []string{"acme", "acme-corp", "lopez-3f0000", "Lopez-3f" + WorkspaceCheck("Lopez-3f")} {
		if Workspace(real) {
			t.Errorf("%s is taken for a fake", real)
		}
	}
}
