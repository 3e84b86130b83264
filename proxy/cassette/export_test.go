package cassette

// What the tests outside the package (the key's, which compare it with
// internal/keyref, a package that imports this one) need from inside.
var (
	MayHoldSecret = mayHoldSecret
	Req           = req
)
