// Package judge scores an agent's answers with a judge model, as
// getsentry/junior's fixture does: a rubric of Pass and Fail criteria,
// the earlier conversation and the call's transcript go to the judge,
// which answers {"answer": "A"…"E", "rationale"}; A scores 1, B 0.75,
// C 0.5, D 0.25 and E 0. A judge's answer that is not that JSON is an
// error, never a pass.
package judge
