// Package version says which agentvcr build is running, for export stamps
// and the CLIs' --version.
package version

import "runtime/debug"

// String returns the module version of the running binary, or "devel" for
// a build from a work tree.
func String() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
