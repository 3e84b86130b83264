package judge_test

import (
	"fmt"

	"github.com/agentvcr/agentvcr/judge"
)

// Parse turns the judge model's answer into a score.
func ExampleParse() {
	v, err := judge.Parse(`{"answer":"B","rationale":"names the date, not the owner"}`)
	fmt.Println(v.Score, v.Rationale, err)
	// Output: 0.75 names the date, not the owner <nil>
}
