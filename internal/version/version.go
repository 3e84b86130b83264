// Package version says which agentvcr build is running, for export stamps
// and the CLIs' --version.
package version

import "runtime/debug"

// stamp is the version a release build sets with the linker, because a
// binary built from a work tree (as the npm package's are, by
// js/agentvcr/scripts/pack.mjs) has no module version of its own:
//
//	go build -ldflags "-X github.com/agentvcr/agentvcr/internal/version.stamp=0.1.0" ./cmd/recorder
//
// Empty (the default) leaves the version to the build info.
var stamp string

// String returns the version stamped into the binary at link time, if
// any; else the module version of the running binary, or, for a build
// from a work tree, "devel" and the VCS revision it was built at
// ("devel+76e2404", "+dirty" for uncommitted changes); "devel" alone when
// the build recorded none (go test, go run).
func String() string {
	if stamp != "" {
		return stamp
	}
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
