package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

const analyzerDoc = `check that agent tests drive the app from outside

An agent test is a _test.go file of a package whose test files import
github.com/agentvcr/agentvcr/fixture. It imports only the fixture,
agentvcr's packages for tests, the standard library, test libraries and
the app's packages declared public (rule imports); it has no model of its
own (rule model-fakes); it runs no SQL against the app's database and
calls nothing of the app's runtime packages (rule internals).`

// NewAnalyzer returns the analyzer of agent tests. public declares the
// app's packages an agent test may import and call besides agentvcr's:
// its test support, such as the package that describes the app to the
// fixture. Each is an import path, or a path ending in "/..." for the
// packages at and below it. The analyzer's flag -public adds more,
// comma-separated, for a driver such as go vet -vettool.
//
// The app is the module of the package under test: the analyzer needs a
// driver that knows it (go vet, go/packages with NeedModule), or every
// package of the app counts as a test library.
func NewAnalyzer(public ...string) *analysis.Analyzer {
	c := &config{public: slices.Clone(public)}
	a := &analysis.Analyzer{
		Name:       "agentvet",
		Doc:        analyzerDoc,
		URL:        "https://github.com/agentvcr/agentvcr/blob/main/docs/vet.md",
		Run:        c.run,
		ResultType: reflect.TypeFor[*result](),
	}
	a.Flags.Var((*listFlag)(&c.public), "public", "the app's packages agent tests may import, comma-separated (path/... for a tree)")
	return a
}

// config is an analyzer's configuration, which its flags set.
type config struct{ public []string }

// result is what the analyzer found in one package, for Run.
type result struct {
	agentTests []string // the agent tests' file names
	found      []found
}

// found is one offence.
type found struct {
	rule, what, message string
	pos                 token.Pos
}

// listFlag is a comma-separated flag that adds to a list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func (c *config) run(pass *analysis.Pass) (any, error) {
	res := &result{}
	var tests []*ast.File
	agent := false
	for _, f := range pass.Files {
		if !strings.HasSuffix(pass.Fset.File(f.FileStart).Name(), "_test.go") {
			continue
		}
		tests = append(tests, f)
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == fixturePath {
				agent = true
			}
		}
	}
	if !agent {
		return res, nil
	}
	v := &vetter{pass: pass, public: c.public, res: res}
	if pass.Module != nil {
		v.module = pass.Module.Path
	}
	for _, f := range tests {
		res.agentTests = append(res.agentTests, pass.Fset.File(f.FileStart).Name())
		v.file(f)
	}
	return res, nil
}

// vetter checks the agent tests of one package.
type vetter struct {
	pass   *analysis.Pass
	module string
	public []string
	res    *result
	decls  map[*types.Func]*ast.FuncDecl // the package's functions, made on first use
}

func (v *vetter) report(n ast.Node, rule, what, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	v.res.found = append(v.res.found, found{rule: rule, what: what, message: msg, pos: n.Pos()})
	v.pass.Report(analysis.Diagnostic{Pos: n.Pos(), End: n.End(), Category: rule, Message: rule + ": " + msg})
}

// What to use instead, the same in several findings.
const (
	useScripted = "script the fixture's model (fixture.ScriptedModel(), then f.Model().Respond) or replay recordings (fixture.Recordings)"
	useResults  = "read what the agent did from the call (conv.Replies, conv.ToolCalls, conv.Turns) or the app's own routes (f.AppURL()), and load earlier turns with fixture.History"
	useFixture  = "drive the app through the fixture's inputs (f.Run, conv.Continue) and read what it did from the call"
)

func (v *vetter) class(path string) class { return classify(path, v.module, v.public) }

func (v *vetter) file(f *ast.File) {
	pkg := v.pass.Pkg
	if !strings.HasSuffix(pkg.Name(), "_test") && v.class(pkg.Path()) == appRuntime {
		v.report(f.Name, RuleInternals, pkg.Path(),
			"this agent test is compiled into the app's package %s: put it in an external test package (package %s_test) that drives the app through the fixture",
			pkg.Path(), pkg.Name())
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		switch v.class(path) {
		case appRuntime:
			v.report(imp, RuleImports, path,
				"%s is a package of the app (module %s): %s; declare a package of test support, such as the one that describes the app to the fixture, public",
				path, v.module, useFixture)
		case agentvcrOther:
			v.report(imp, RuleImports, path,
				"%s is not one of agentvcr's packages for tests: use %s", path, strings.Join(agentvcrForTests(), ", "))
		case database:
			v.report(imp, RuleInternals, path, "%s reads or writes the app's database: %s", path, useResults)
		}
	}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		if call, ok := n.(*ast.CallExpr); ok {
			v.call(call, stack)
		}
		return true
	})
}

// call checks one call; stack holds it and the nodes around it.
func (v *vetter) call(call *ast.CallExpr, stack []ast.Node) {
	fn, ok := typeutil.Callee(v.pass.TypesInfo, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return
	}
	what := funcName(fn)
	method := fn.Signature().Recv() != nil
	switch path := fn.Pkg().Path(); {
	case path == fakeaiPath && !method && (fn.Name() == "NewServer" || fn.Name() == "New" || fn.Name() == "NewModel"):
		v.report(call, RuleModelFakes, what, "%s makes a model of the test's own: %s", what, useScripted)
	case path == fixturePath && !method && fn.Name() == "Upstream":
		if !v.besideScripted(stack) {
			v.report(call, RuleModelFakes, what,
				"fixture.Upstream without fixture.ScriptedModel() in the same fixture.New call answers the agent's model requests with a stand-in of the test's own: %s",
				useScripted)
		}
	case path == fixturePath && method && fn.Name() == "DatabaseURL":
		v.report(call, RuleInternals, what, "f.DatabaseURL() hands the test the app's database: %s", useResults)
	case path == "net/http/httptest" && !method && (fn.Name() == "NewServer" || fn.Name() == "NewTLSServer" || fn.Name() == "NewUnstartedServer"):
		if serves := v.servesModel(call, stack); serves != "" {
			v.report(call, RuleModelFakes, what, "%s serves %s from the test, a model of its own: %s", what, serves, useScripted)
		}
	case fn.Pkg() == v.pass.Pkg:
		// The test's own helpers are its business; the package's other
		// functions are the app's, in a test compiled into it.
		if file := v.pass.Fset.File(fn.Pos()); file != nil && !strings.HasSuffix(file.Name(), "_test.go") && v.class(path) == appRuntime {
			v.report(call, RuleInternals, what, "%s is a call into the app's runtime (%s): %s", what, path, useFixture)
		}
	case v.class(path) == appRuntime:
		v.report(call, RuleInternals, what, "%s is a call into the app's runtime (%s): %s", what, path, useFixture)
	}
}

// besideScripted reports whether the call on top of stack is an argument
// of a fixture.New call that has fixture.ScriptedModel() among its
// arguments too: then the model is scripted, and an upstream answers the
// rest of the internet only.
func (v *vetter) besideScripted(stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	outer, ok := stack[len(stack)-2].(*ast.CallExpr)
	if !ok || !v.is(outer, fixturePath, "New") {
		return false
	}
	return slices.ContainsFunc(outer.Args, func(arg ast.Expr) bool {
		c, ok := ast.Unparen(arg).(*ast.CallExpr)
		return ok && v.is(c, fixturePath, "ScriptedModel")
	})
}

// is reports whether call calls the function name of the package at path.
func (v *vetter) is(call *ast.CallExpr, path, name string) bool {
	fn, ok := typeutil.Callee(v.pass.TypesInfo, call).(*types.Func)
	return ok && fn.Pkg() != nil && fn.Pkg().Path() == path && fn.Name() == name && fn.Signature().Recv() == nil
}

// servesModel says what model an httptest server call serves: "a fakeai
// model" for a handler of fakeai's, or the model route or host that a
// string of the handler names, or "" for none. The handler is its
// expression, the functions of the test's package it names (a
// ServeHTTP method of the test's own type among them), and for a local
// variable (a mux, a handler func) what the function around the call
// assigns to it and the calls on it (mux.HandleFunc("/v1/messages", …)).
func (v *vetter) servesModel(call *ast.CallExpr, stack []ast.Node) string {
	if len(call.Args) == 0 {
		return ""
	}
	h := call.Args[0]
	t := v.pass.TypesInfo.TypeOf(h)
	named := namedOf(t)
	if named != nil && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == fakeaiPath {
		return "a fakeai model"
	}
	scopes := []ast.Node{h}
	if named != nil && named.Obj().Pkg() == v.pass.Pkg {
		if m, _, _ := types.LookupFieldOrMethod(t, true, v.pass.Pkg, "ServeHTTP"); m != nil {
			if d := v.decl(m); d != nil {
				scopes = append(scopes, d)
			}
		}
	}
	var around *ast.FuncDecl
	for _, n := range stack {
		if fd, ok := n.(*ast.FuncDecl); ok {
			around = fd
			break
		}
	}
	ast.Inspect(h, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		switch obj := v.pass.TypesInfo.Uses[id].(type) {
		case *types.Func:
			if d := v.decl(obj); d != nil {
				scopes = append(scopes, d)
			}
		case *types.Var:
			if around != nil && obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope() {
				scopes = append(scopes, v.aroundVar(around, obj)...)
			}
		}
		return true
	})
	for _, s := range scopes {
		if m := stringMentioning(s); m != "" {
			return fmt.Sprintf("the model route %q", m)
		}
	}
	return ""
}

// aroundVar returns what fd assigns to the local variable obj and the
// method calls on it.
func (v *vetter) aroundVar(fd *ast.FuncDecl, obj *types.Var) []ast.Node {
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && (v.pass.TypesInfo.Uses[id] == obj || v.pass.TypesInfo.Defs[id] == obj)
	}
	var nodes []ast.Node
	ast.Inspect(fd, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if slices.ContainsFunc(n.Lhs, is) {
				for _, r := range n.Rhs {
					nodes = append(nodes, r)
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if is(name) && i < len(n.Values) {
					nodes = append(nodes, n.Values[i])
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && is(sel.X) {
				nodes = append(nodes, n)
			}
		}
		return true
	})
	return nodes
}

// decl returns the declaration of obj when it is a function of the
// package under analysis.
func (v *vetter) decl(obj types.Object) *ast.FuncDecl {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() != v.pass.Pkg {
		return nil
	}
	if v.decls == nil {
		v.decls = map[*types.Func]*ast.FuncDecl{}
		for _, f := range v.pass.Files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					if def, ok := v.pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
						v.decls[def] = fd
					}
				}
			}
		}
	}
	return v.decls[fn.Origin()]
}

// stringMentioning returns the model route or host the first string
// literal under n that names one names.
func stringMentioning(n ast.Node) string {
	var marker string
	ast.Inspect(n, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && marker == "" {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				marker = modelMarker(s)
			}
		}
		return marker == ""
	})
	return marker
}

// namedOf returns the named type of t or of what t points to.
func namedOf(t types.Type) *types.Named {
	if t == nil {
		return nil
	}
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	named, _ := t.(*types.Named)
	return named
}

// funcName names fn by its package's name: app.New, (*app.App).Handler.
func funcName(fn *types.Func) string {
	byName := func(p *types.Package) string { return p.Name() }
	if recv := fn.Signature().Recv(); recv != nil {
		return "(" + types.TypeString(recv.Type(), byName) + ")." + fn.Name()
	}
	return fn.Pkg().Name() + "." + fn.Name()
}
