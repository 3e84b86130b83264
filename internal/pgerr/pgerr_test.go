package pgerr

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A server that refuses connections is said once, whatever the sslmode
// made pgx try, and the error is still pgx's underneath.
func TestOnceSaysADialErrorOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // its port refuses connections from now on
	for _, mode := range []string{"prefer", "disable"} {
		t.Run(mode, func(t *testing.T) {
			_, err := pgx.Connect(t.Context(), "postgres://u@"+addr+"/x?sslmode="+mode)
			if err == nil {
				t.Fatalf("connected to %s, whose listener is closed", addr)
			}
			once := Once(err)
			if n := strings.Count(once.Error(), "dial error"); n != 1 || strings.Contains(once.Error(), "\n") {
				t.Fatalf("%q says the dial error %d times, or on more than one line", once, n)
			}
			if _, ok := errors.AsType[*pgconn.ConnectError](once); !ok {
				t.Fatalf("%v does not unwrap to pgx's *pgconn.ConnectError", once)
			}
		})
	}
}
