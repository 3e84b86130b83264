package version

import (
	"strings"
	"testing"
)

func TestAStampWinsOverTheBuildInfo(t *testing.T) {
	if got := String(); !strings.HasPrefix(got, "devel") {
		t.Fatalf("unstamped String() = %q, want the build info's (devel under go test)", got)
	}
	defer func(s string) { stamp = s }(stamp)
	stamp = "0.1.0"
	if got := String(); got != "0.1.0" {
		t.Errorf("stamped String() = %q, want 0.1.0", got)
	}
}
