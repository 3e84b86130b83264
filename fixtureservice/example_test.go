package fixtureservice_test

import (
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/agentvcr/agentvcr/fixtureservice"
)

// Serving fixtures on loopback, as recorder fixture serve does: a client
// reads the URL and the token, then creates fixtures with POST
// /v1/fixtures. It starts PostgreSQL on first need, so it is compiled,
// not run.
func Example() {
	token, err := fixtureservice.NewToken()
	if err != nil {
		log.Fatal(err)
	}
	svc := fixtureservice.New(token, fixtureservice.Options{})
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("{\"url\": \"http://%s\", \"token\": %q}\n", ln.Addr(), token)
	log.Fatal(http.Serve(ln, svc))
}
