package slackio_test

import (
	"fmt"

	"github.com/agentvcr/agentvcr/examples/agent/slackio"
)

// Sign gives the x-slack-signature header a signed Slack event carries.
func ExampleSign() {
	body := []byte(`{"type":"url_verification","challenge":"c-1"}`)
	fmt.Println(slackio.Sign("dev-signing-secret", 1790000000, body))
	// Output: v0=e7b9a1301c3d90819cf18b29c9aa492f2ea5a8617355c5753d72c082eee04454
}
