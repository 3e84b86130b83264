package vet

import (
	"slices"
	"strings"
)

// The rules, as findings and the ratchet name them.
const (
	// RuleImports: an agent test imports the fixture, agentvcr's packages
	// for tests, the standard library, test libraries and the app's
	// packages declared public; no other package of the app's module and
	// no other package of agentvcr.
	RuleImports = "imports"
	// RuleModelFakes: no model of the test's own; the fixture's scripted
	// model or recordings instead.
	RuleModelFakes = "model-fakes"
	// RuleInternals: no SQL against the app's database and no calls into
	// the app's runtime packages.
	RuleInternals = "internals"
)

const (
	agentvcrModule = "github.com/agentvcr/agentvcr"
	fixturePath    = agentvcrModule + "/fixture"
	fakeaiPath     = agentvcrModule + "/fakeai"
)

// agentvcrForTests returns agentvcr's packages an agent test may import,
// relative to the module: the fixture, the packages of the types in its
// API, and the runners built on it. Any other agentvcr package is not for
// agent tests: the commands, the control API, the proxy's parts, the
// sanitizer, internal/..., and the row packages (see databaseClient).
func agentvcrForTests() []string {
	return []string{
		"fixture",
		"fakeai", "history", "judge", "pricing", "proxy", "proxy/slack", "transcript",
		"evals", "evals/evalcmd", "catalog", "catalog/catalogcmd",
	}
}

// databaseClient reports whether the package at path talks to a
// database: an agent test that imports it reaches into the app's rows.
// agentvcr's export, loader and schema read and write the app's rows too;
// the fixture's History does that for a test.
func databaseClient(path string) bool {
	for _, p := range []string{
		"database/sql",
		"github.com/jackc/pgx", "github.com/jackc/pgconn", "github.com/lib/pq",
		"github.com/jmoiron/sqlx", "github.com/go-sql-driver/mysql", "github.com/mattn/go-sqlite3",
		"modernc.org/sqlite", "gorm.io/gorm", "github.com/uptrace/bun",
		agentvcrModule + "/export", agentvcrModule + "/loader", agentvcrModule + "/schema",
	} {
		if under(path, p) {
			return true
		}
	}
	return false
}

// modelMarker returns the model route or host that s mentions, or "":
// what a server answering the model is written with.
func modelMarker(s string) string {
	for _, m := range []string{
		// Routes of the model dialects and of the AI SDK's gateway.
		"/v1/messages", "/v1/chat/completions", "/v1/completions", "/v1/responses",
		"/v1/embeddings", "/v1/images/generations",
		"/ai/language-model", "/ai/embedding-model", "/ai/image-model",
		":generateContent", ":streamGenerateContent",
		// Hosts.
		"api.anthropic.com", "api.openai.com", "ai-gateway.vercel.sh", "generativelanguage.googleapis.com",
	} {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}

// under reports whether path is root or a package below it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// matches reports whether path matches a declared pattern: an import
// path names that package; one ending in "/..." names the packages at and
// below the part before it, as in the go command.
func matches(path, pattern string) bool {
	if root, ok := strings.CutSuffix(pattern, "/..."); ok {
		return under(path, root)
	}
	return path == pattern
}

// class is what an import path is to an agent test.
type class int

const (
	allowed       class = iota
	appRuntime          // a package of the app's module, not declared public
	agentvcrOther       // a package of agentvcr not for agent tests
	database            // a database client, or agentvcr's row packages
)

// classify says what path is to an agent test of module: the module of
// the test's package ("" when the driver does not know it).
func classify(path, module string, public []string) class {
	switch {
	case databaseClient(path):
		return database
	case slices.ContainsFunc(public, func(p string) bool { return matches(path, p) }):
		return allowed
	case strings.HasPrefix(path, agentvcrModule+"/") && slices.Contains(agentvcrForTests(), strings.TrimPrefix(path, agentvcrModule+"/")):
		return allowed
	case under(path, agentvcrModule) && !under(path, agentvcrModule+"/examples"):
		// Before the module: in agentvcr's own module, its packages are
		// agentvcr's still, and its examples the apps.
		return agentvcrOther
	case module != "" && under(path, module):
		return appRuntime
	}
	// The standard library and other modules: test libraries.
	return allowed
}
