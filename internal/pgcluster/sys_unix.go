//go:build unix

package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// credential is whom initdb, postgres and the reaper run as.
type credential = syscall.Credential

// supported says whether Start can run a cluster here: on Unix, yes.
func supported() error { return nil }

// procAttr runs a process as cred (nil: as us) and, with ownGroup, in a
// process group of its own, out of the reach of a Ctrl-C aimed at ours.
func procAttr(cred *credential, ownGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: ownGroup}
}

// serverCredential returns whom initdb and postgres should run as: nil,
// meaning the current user, unless that is root, whom PostgreSQL refuses to
// run as.
func serverCredential() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if errors.As(err, new(user.UnknownUserError)) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pgcluster: %w", err)
		}
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("pgcluster: user %s: %w", name, err)
		}
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("pgcluster: user %s: %w", name, err)
		}
		return &credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New(`pgcluster: PostgreSQL does not run as root, and neither user "postgres" nor "nobody" exists`)
}
