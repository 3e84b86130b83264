package fixturetest_test

import (
	"os"
	"testing"

	"github.com/agentvcr/agentvcr/fixture"
)

// The fixtures of these tests share one PostgreSQL server, stopped when
// they are done.
func TestMain(m *testing.M) { os.Exit(fixture.Main(m)) }
