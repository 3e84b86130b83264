package vet

import (
	"go/types"
	"testing"

	"golang.org/x/tools/go/packages"
)

// agentvcr's packages for tests exist, and every agentvcr package that
// the fixture's exported API names is one of them: a test may hold what
// the fixture hands it (a *fakeai.Model, a proxy.Mode, a judge.Rubric).
func TestThePackagesForTestsCoverTheFixturesAPI(t *testing.T) {
	var paths []string
	for _, rel := range agentvcrForTests() {
		paths = append(paths, agentvcrModule+"/"+rel)
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: ".."}, paths...)
	if err != nil {
		t.Fatal(err)
	}
	var fixture *types.Package
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		if p.PkgPath == fixturePath {
			fixture = p.Types
		}
	}
	if len(pkgs) != len(paths) || fixture == nil {
		t.Fatalf("loaded %d packages of %d (fixture: %v)", len(pkgs), len(paths), fixture != nil)
	}
	named := map[string]bool{}
	seen := map[types.Type]bool{}
	var walk func(types.Type)
	walk = func(typ types.Type) {
		if typ == nil || seen[typ] {
			return
		}
		seen[typ] = true
		switch typ := types.Unalias(typ).(type) {
		case *types.Named:
			obj := typ.Obj()
			if obj.Pkg() == nil {
				return
			}
			named[obj.Pkg().Path()] = true
			for ta := range typ.TypeArgs().Types() {
				walk(ta)
			}
			if obj.Pkg() != fixture {
				return
			}
			walk(typ.Underlying())
			for m := range typ.Methods() {
				if m.Exported() {
					walk(m.Type())
				}
			}
		case *types.Pointer:
			walk(typ.Elem())
		case *types.Slice:
			walk(typ.Elem())
		case *types.Array:
			walk(typ.Elem())
		case *types.Map:
			walk(typ.Key())
			walk(typ.Elem())
		case *types.Chan:
			walk(typ.Elem())
		case *types.Signature:
			for v := range typ.Params().Variables() {
				walk(v.Type())
			}
			for v := range typ.Results().Variables() {
				walk(v.Type())
			}
		case *types.Struct:
			for f := range typ.Fields() {
				if f.Exported() {
					walk(f.Type())
				}
			}
		case *types.Interface:
			for m := range typ.Methods() {
				walk(m.Type())
			}
		}
	}
	for _, name := range fixture.Scope().Names() {
		if obj := fixture.Scope().Lookup(name); obj.Exported() {
			walk(obj.Type())
		}
	}
	if !named[agentvcrModule+"/fakeai"] || !named[agentvcrModule+"/judge"] {
		t.Fatalf("the fixture's API names %v; want fakeai's and judge's types among them", named)
	}
	for path := range named {
		if under(path, agentvcrModule) && classify(path, "", nil) != allowed {
			t.Errorf("the fixture's API names a type of %s, which is not one of agentvcr's packages for tests", path)
		}
	}
}

// What each import path is to an agent test of module example.com/bot,
// which declares example.com/bot/bottest public, and in agentvcr's own
// module, whose examples are the apps.
func TestClassify(t *testing.T) {
	public := []string{"example.com/bot/bottest", "example.com/bot/support/..."}
	tests := []struct {
		path, module string
		want         class
	}{
		{"testing", "example.com/bot", allowed},
		{"net/http/httptest", "example.com/bot", allowed},
		{"github.com/google/go-cmp/cmp", "example.com/bot", allowed},
		{"github.com/agentvcr/agentvcr/fixture", "example.com/bot", allowed},
		{"github.com/agentvcr/agentvcr/proxy/slack", "example.com/bot", allowed},
		{"github.com/agentvcr/agentvcr/proxy/wire", "example.com/bot", agentvcrOther},
		{"github.com/agentvcr/agentvcr/internal/pgtest", "example.com/bot", agentvcrOther},
		{"example.com/bot", "example.com/bot", appRuntime},
		{"example.com/bot/store", "example.com/bot", appRuntime},
		{"example.com/bottest", "example.com/bot", allowed}, // another module
		{"example.com/bot/bottest", "example.com/bot", allowed},
		{"example.com/bot/bottest/more", "example.com/bot", appRuntime}, // a path names one package
		{"example.com/bot/support", "example.com/bot", allowed},
		{"example.com/bot/support/slack", "example.com/bot", allowed},
		{"database/sql", "example.com/bot", database},
		{"github.com/jackc/pgx/v5/pgxpool", "example.com/bot", database},
		{"github.com/lib/pq", "example.com/bot", database},
		{"github.com/agentvcr/agentvcr/loader", "example.com/bot", database},
		{"example.com/bot/store", "", allowed}, // a driver that knows no module
		{"github.com/agentvcr/agentvcr/examples/agent/app", agentvcrModule, appRuntime},
		{"github.com/agentvcr/agentvcr/fakeai", agentvcrModule, allowed},
		{"github.com/agentvcr/agentvcr/proxy/wire", agentvcrModule, agentvcrOther},
	}
	for _, tt := range tests {
		if got := classify(tt.path, tt.module, public); got != tt.want {
			t.Errorf("classify(%q, %q) = %d; want %d", tt.path, tt.module, got, tt.want)
		}
	}
}
