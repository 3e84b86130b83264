// Package agent is the app's runtime.
package agent

import "net/http"

// Header names the user of a web request.
const Header = "X-User"

// Store is the app's database.
type Store struct{}

// Count counts the stored messages.
func (s *Store) Count() int { return 0 }

// Start returns the app's routes.
func Start() http.Handler { return http.NotFoundHandler() }
