package app_test

import (
	"testing"
)

// The insert routes refuse what they cannot store, store nothing then,
// and are admin routes: off without the admin secret, closed to the
// heartbeat's.
func TestTheInsertRoutesRefuseBadInput(t *testing.T) {
	f, _ := newAgent(t, nil)
	bad := map[string][]map[string]any{
		"/api/internal/memories": {
			{},
			{"text": "  "},
			{"user": "not-an-email", "text": "Likes tea."},
			{"user": "a@example.com", "text": "Likes\x00tea."},
			{"text": string(make([]byte, 5000))},
		},
		"/api/internal/credentials": {
			{},
			{"provider": "github", "token": "t"}, // nobody's
			{"user": "a@example.com", "provider": "github"},               // no token
			{"user": "a@example.com", "provider": "gitlab", "token": "t"}, // a provider no tool takes
			{"user": "not-an-email", "provider": "github", "token": "t"},
			{"slackUserId": "U1\x00", "provider": "github", "token": "t"},
		},
	}
	for path, bodies := range bad {
		for _, body := range bodies {
			if code := call(t, f, "POST", path, admin(), body, nil); code != 400 {
				t.Errorf("%s %v: %d; want 400", path, body, code)
			}
		}
	}
	if n := one[int](t, db(t, f), `SELECT (SELECT count(*) FROM agent_memories) + (SELECT count(*) FROM agent_credentials)`); n != 0 {
		t.Fatalf("%d rows written", n)
	}
	off, _ := newAgent(t, map[string]string{"AGENT_ADMIN_SECRET": ""})
	for path := range bad {
		if code := call(t, off, "POST", path, scheduler(), map[string]any{}, nil); code != 404 {
			t.Errorf("%s with no admin secret set: %d; want 404", path, code)
		}
		if code := call(t, f, "POST", path, scheduler(), map[string]any{}, nil); code != 401 {
			t.Errorf("%s with the scheduler's secret: %d; want 401", path, code)
		}
	}
}
