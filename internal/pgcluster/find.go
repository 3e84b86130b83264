package pgcluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// NotFoundError reports that no directory holds both initdb and postgres.
type NotFoundError struct {
	// Searched lists the directories and glob patterns that were searched,
	// in order.
	Searched []string
}

func (e *NotFoundError) Error() string {
	return "pgcluster: PostgreSQL server binaries (initdb and postgres) not found in " +
		strings.Join(e.Searched, ", ") +
		`; install the Debian package "postgresql" (apt-get install postgresql)`
}

// findBinDir returns the first directory that holds both initdb and
// postgres, searching the absolute directories of pathList (in $PATH
// format) and then the glob patterns in roots. The matches of a pattern are
// tried from the highest version to the lowest, so that the newest of
// several installed major versions wins.
//
// Both programs must come from the same directory because initdb writes a
// data directory only a postgres of its own major version can read.
func findBinDir(pathList string, roots []string) (string, error) {
	var dirs, searched []string
	for _, dir := range filepath.SplitList(pathList) {
		// Relative entries would make the result depend on the working
		// directory; os/exec refuses them for the same reason.
		if filepath.IsAbs(dir) {
			dirs = append(dirs, dir)
			searched = append(searched, dir)
		}
	}
	for _, pattern := range roots {
		// Glob fails only for malformed patterns, which then match nothing.
		matches, _ := filepath.Glob(pattern)
		slices.SortFunc(matches, func(a, b string) int { return compareVersions(b, a) })
		dirs = append(dirs, matches...)
		searched = append(searched, pattern)
	}
	for _, dir := range dirs {
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", &NotFoundError{Searched: searched}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// compareVersions compares a and b like strings.Compare, except that runs
// of digits compare by numeric value, so that "9.6" < "10" < "15".
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		na, nb := leadingDigits(a), leadingDigits(b)
		if na == 0 || nb == 0 {
			if a[0] != b[0] {
				return strings.Compare(a[:1], b[:1])
			}
			a, b = a[1:], b[1:]
			continue
		}
		da, db := strings.TrimLeft(a[:na], "0"), strings.TrimLeft(b[:nb], "0")
		if len(da) != len(db) {
			return len(da) - len(db)
		}
		if c := strings.Compare(da, db); c != 0 {
			return c
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}
