// Package junior writes the reference agent's rows as getsentry/junior
// writes them: each event type's payload, its idempotency key
// (message:<id>, message:<id>:handled, turn:<turnId>:terminal, …) and the
// turn id, in one place, so the turn loop and the routes say what they
// write and not how Junior spells it. A row built here is what Junior's
// own turn stores, which is what lets agentvcr's exports, loads and
// forks move conversations between the two.
package junior
