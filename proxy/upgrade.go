package proxy

import (
	"encoding/json"
	"log/slog"
	"net/http"
)

// isUpgrade reports whether req asks to switch the connection to another
// protocol: a WebSocket.
func isUpgrade(req *http.Request) bool {
	return req.Header.Get("Upgrade") != "" && hasToken(req.Header, "Connection", "upgrade")
}

// serveUpgrade serves an upgrade (a WebSocket) under a rule that records
// or replays. What follows a 101 is frames both ways for as long as the
// connection lasts, which a cassette does not hold: in modes auto and
// record the upgrade goes live, observed and not recorded, its response's
// body left the connection it is (a recorder's copy would hide it, and
// the upgrade fail); in mode replay, which sends nothing live, it misses
// at once with a 412 that says so.
func (p *Proxy) serveUpgrade(req *http.Request, st *ruleState, mode Mode) (*http.Response, error) {
	if mode == ModeReplay {
		miss := MissReport{Rule: st.rule.Name, Method: req.Method, URL: redactedURL(req)}
		p.mu.Lock()
		p.stats.Missed++
		if len(p.misses) < maxMisses {
			p.misses = append(p.misses, miss)
		}
		p.mu.Unlock()
		p.log(slog.LevelWarn, "missed: a WebSocket is never recorded, and the mode is replay", request(req.Method, req.URL.String(), st.rule.Name))
		b, _ := json.MarshalIndent(map[string]any{
			"error": "agentvcr proxy: a WebSocket (an upgrade to another protocol) is never recorded, and the mode is replay: nothing went live; give its URL a rule in mode passthrough to let it through",
			"miss":  miss,
		}, "", "  ")
		return p.text(req, http.StatusPreconditionFailed, OutcomeMissed, string(b)+"\n"), nil
	}
	resp, err := p.upstream(req)
	if err != nil {
		return p.upstreamError(req, err), nil
	}
	resp.Header.Set(Header, string(OutcomeLive))
	p.count(func(s *Stats) { s.Live++ })
	if resp.StatusCode == http.StatusSwitchingProtocols {
		p.log(slog.LevelWarn, "not recorded: a WebSocket goes live and is never recorded; in mode replay it misses", request(req.Method, req.URL.String(), st.rule.Name))
	}
	return resp, nil
}
