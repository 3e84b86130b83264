package notagent_test

import (
	"database/sql"
	"net/http/httptest"
	"testing"

	"github.com/agentvcr/agentvcr/fakeai"

	"example.com/bot/agent"
)

func TestUnit(t *testing.T) {
	up := fakeai.NewServer(t)
	srv := httptest.NewServer(agent.Start())
	defer srv.Close()
	_, _ = up, sql.ErrNoRows
}
