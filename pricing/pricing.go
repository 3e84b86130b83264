package pricing

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Price is what a model costs, in US dollars: per million tokens of
// input, output, and input read from and written to the prompt cache,
// and per thousand requests of each tool the provider runs itself
// (web_search, web_fetch...). A request that used what its Price has no
// figure for (cache tokens without a cache price, a server tool not in
// PerKServerTool) stays unpriced: a guess would be a wrong figure.
type Price struct {
	InputPerMTok, OutputPerMTok         float64
	CacheReadPerMTok, CacheWritePerMTok float64
	PerKServerTool                      map[string]float64
}

// Table prices model requests by model id, as the request names it
// (such as "anthropic/claude-sonnet-4.5").
type Table map[string]Price

// Usage is what one model request used, as its response reported it.
type Usage struct {
	Model string `json:"model"`
	// InputTokens counts every input token, cache reads and writes
	// included (wire.Finish).
	InputTokens      int            `json:"inputTokens"`
	OutputTokens     int            `json:"outputTokens"`
	CacheReadTokens  int            `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int            `json:"cacheWriteTokens,omitempty"`
	ServerTools      map[string]int `json:"serverTools,omitempty"`
	// Error is the provider's error or the request's failure, when it
	// ended in one.
	Error string `json:"error,omitempty"`
	// InFlight says the request had not ended when this was read.
	InFlight bool `json:"inFlight,omitempty"`
	// NotBilled says why a request that reported no usage cost nothing:
	// the proxy answered it itself, so it never reached the provider, or
	// the provider refused it with an error status, which providers do
	// not bill. "" when that is not known: a request that failed without
	// it (a timeout, a stream cut) may have been billed.
	NotBilled string `json:"notBilled,omitempty"`
}

// Reported says the request reported its usage: it ended, with tokens.
// Zero tokens is no report, never a free request; only NotBilled makes
// a request without a report known to be free (Table.Cost).
func (u Usage) Reported() bool { return !u.InFlight && u.InputTokens+u.OutputTokens > 0 }

var (
	// ErrNoUsage is why a request that reported no usage is unpriced
	// (Usage.Reported is false). Its tokens are unknown too.
	ErrNoUsage = errors.New("no usage reported")
	// ErrIncomplete is why a request that failed or was still in flight
	// before it reported its usage is unpriced. It is also ErrNoUsage.
	// Only this request's figure is missing: unlike every other reason,
	// it says nothing of the requests that end well, so a cost ceiling
	// can still hold.
	ErrIncomplete = errors.New("no usage yet")
)

// incomplete is ErrIncomplete and ErrNoUsage, with why.
type incomplete string

func (e incomplete) Error() string { return string(e) }

func (e incomplete) Is(target error) bool { return target == ErrIncomplete || target == ErrNoUsage }

// Cost is what the request cost, or an error saying why it cannot be
// said (ErrNoUsage, ErrIncomplete, or any other reason the table cannot
// price it: no price for its model, no figure for what it used). An
// unknown cost is never zero. The one request without usage whose cost
// is known is one NotBilled says nothing was billed for: it cost 0,
// with or without a price for its model.
func (p Table) Cost(u Usage) (usd float64, err error) {
	switch {
	case u.InFlight:
		return 0, incomplete("still in flight: its usage is not known yet")
	case !u.Reported() && u.NotBilled != "":
		return 0, nil
	case !u.Reported() && u.Error != "":
		return 0, incomplete("it failed before it reported its usage: " + u.Error)
	case !u.Reported():
		return 0, ErrNoUsage
	}
	price, ok := p[u.Model]
	switch {
	case !ok:
		return 0, fmt.Errorf("no price for model %q", u.Model)
	case u.CacheReadTokens > 0 && price.CacheReadPerMTok == 0:
		return 0, fmt.Errorf("no cache-read price for model %q", u.Model)
	case u.CacheWriteTokens > 0 && price.CacheWritePerMTok == 0:
		return 0, fmt.Errorf("no cache-write price for model %q", u.Model)
	case u.InputTokens < u.CacheReadTokens+u.CacheWriteTokens:
		// Input holds the cache in every dialect the proxy reads; usage
		// that says otherwise is counted some other way, and a price of
		// it would be a guess.
		return 0, fmt.Errorf("model %q reported fewer input tokens than cache tokens: its usage cannot be priced", u.Model)
	}
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	usd = (float64(plain)*price.InputPerMTok + float64(u.OutputTokens)*price.OutputPerMTok +
		float64(u.CacheReadTokens)*price.CacheReadPerMTok + float64(u.CacheWriteTokens)*price.CacheWritePerMTok) / 1e6
	for _, tool := range slices.Sorted(maps.Keys(u.ServerTools)) {
		perK, ok := price.PerKServerTool[tool]
		if !ok {
			return 0, fmt.Errorf("no price for server tool %q of model %q", tool, u.Model)
		}
		usd += float64(u.ServerTools[tool]) * perK / 1000
	}
	return usd, nil
}

// Total is what a set of requests used and cost. The zero Total is an
// empty set, which cost nothing.
type Total struct {
	Requests int
	// The tokens of the requests that reported them.
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int
	// PricedUSD is what the priced requests cost: all of the cost when
	// Unpriced is empty, a part of it otherwise.
	PricedUSD float64
	// Unpriced holds, for each unpriced request, why (Table.Cost).
	Unpriced []error
}

// Sum prices each request and sums them.
func (p Table) Sum(us ...Usage) Total {
	var t Total
	for _, u := range us {
		usd, err := p.Cost(u)
		t.Add(u, usd, err)
	}
	return t
}

// Add counts a request, what it cost and why it is unpriced, as
// Table.Cost says them.
func (t *Total) Add(u Usage, usd float64, err error) {
	t.Requests++
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheWriteTokens += u.CacheWriteTokens
	if err != nil {
		t.Unpriced = append(t.Unpriced, err)
		return
	}
	t.PricedUSD += usd
}

// USD is what the requests cost, or nil when one is unpriced.
func (t Total) USD() *float64 {
	if len(t.Unpriced) > 0 {
		return nil
	}
	v := t.PricedUSD
	return &v
}

// Reasons says why requests are unpriced, each reason once, in the
// requests' order.
func (t Total) Reasons() []string {
	var out []string
	for _, err := range t.Unpriced {
		if !slices.Contains(out, err.Error()) {
			out = append(out, err.Error())
		}
	}
	return out
}

// Count is how many requests are unpriced for target (errors.Is), such
// as ErrIncomplete or ErrNoUsage.
func (t Total) Count(target error) int {
	n := 0
	for _, err := range t.Unpriced {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}
