// Package version says which agentvcr build is running, for export stamps
// and the CLIs' --version.
package version

import "runtime/debug"

// String returns the module version of the running binary, or, for a
// build from a work tree, "devel" and the VCS revision it was built at
// ("devel+76e2404", "+dirty" for uncommitted changes); "devel" alone when
// the build recorded none (go test, go run).
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if len(s.Value) > 12 {
				s.Value = s.Value[:12]
			}
			v += "+" + s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		v += "+dirty"
	}
	return v
}
