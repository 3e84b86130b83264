package agentevals

import "github.com/agentvcr/agentvcr/fixture"

// Routes are the reference agent's: Junior's, and the idle, queue,
// conversations and automations routes Junior lacks, through which a
// fixture knows when the agent is idle, batches inputs and starts
// automations.
func Routes() fixture.Routes {
	r := fixture.JuniorRoutes()
	r.Idle = "/api/internal/idle"
	r.Queue = "/api/internal/queue"
	r.QueueHold = "/api/internal/queue/hold"
	r.QueueRelease = "/api/internal/queue/release"
	r.QueueHoldPaused = "/api/internal/queue/hold?only=paused"
	r.Conversations = "/api/internal/conversations"
	r.Automations = "/api/internal/automations"
	return r
}
