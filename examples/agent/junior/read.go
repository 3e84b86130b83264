package junior

import (
	"encoding/json"
	"strings"

	"github.com/agentvcr/agentvcr/examples/agent/store"
)

// ModelMessage reads a history row's model message, Pi's shape:
// encoded as a string in v2 rows, inline in v1 ones.
func ModelMessage(e store.Event) (string, error) {
	if e.SchemaVersion >= 2 {
		var p struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return "", err
		}
		return p.Message, nil
	}
	return string(e.Payload), nil
}

// Text is the text of an assistant message, its blocks joined.
func Text(pi store.Assistant) string {
	var parts []string
	for _, c := range pi.Content {
		if c.Type == "text" && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}
