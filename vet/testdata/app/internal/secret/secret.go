// Package secret is an internal package of the app.
package secret

// Key is the app's signing key.
const Key = "test-signing-secret"
