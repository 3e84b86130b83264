// Package pricing says what model requests used and cost, for the
// fixture's reports, the eval runner's cost and ceiling, and the
// catalog's usage: one Table of prices per model, one Usage per request,
// and one rule for what cannot be priced.
//
// The one thing a caller must know: an unknown cost is never zero. A
// request that failed or was still in flight before it reported its
// usage, one that reported no usage, one whose model has no price, or
// one that used what its price has no figure for, is unpriced, and
// Table.Cost says why with an error; a sum of requests with one unpriced
// has no total (Total.USD is nil), only the part that is known. The
// exception is a request known to have cost nothing (Usage.NotBilled):
// one the proxy answered itself, or one the provider refused with an
// error status; it costs 0.
package pricing
