// Package fakemark is the mark the sanitizer's fakes carry where a fake
// could pass for an original: check characters that the rewrite writes
// and that a check without the key (package leakcheck) reads. It is the
// format both sides agree on, not matching code.
package fakemark

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

const base36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// SlackIDChecks is how many check characters end a fake Slack id of n
// characters: two (one real id in 1,296 passes for a fake) but for the
// shortest.
func SlackIDChecks(n int) int {
	if n >= 6 {
		return 2
	}
	return 1
}

// SlackIDCheck is the n check characters of a fake Slack id whose other
// characters are body.
func SlackIDCheck(body string, n int) string {
	sum := sha256.Sum256([]byte("agentvcr-slack-id\x00" + body))
	v := binary.BigEndian.Uint32(sum[:])
	c := make([]byte, n)
	for i := range c {
		c[i] = base36[v%36]
		v /= 36
	}
	return string(c)
}

// SlackID reports whether id, shaped like a Slack id, carries the check
// characters of the sanitizer's fakes.
func SlackID(id string) bool {
	if len(id) < 3 {
		return false
	}
	n := SlackIDChecks(len(id))
	return id[len(id)-n:] == SlackIDCheck(id[:len(id)-n], n)
}

// WorkspaceCheck is the four check characters that end a fake workspace
// name whose other characters are base (last-<2 hex>).
func WorkspaceCheck(base string) string {
	sum := sha256.Sum256([]byte("agentvcr-workspace\x00" + base))
	return hex.EncodeToString(sum[:2])
}

// Workspace reports whether a workspace name is one of the sanitizer's
// fakes: lower-case letters, a dash, two random hex digits and four of
// WorkspaceCheck (one real name in 65,536 of this shape passes for one).
func Workspace(ws string) bool {
	dash := strings.LastIndexByte(ws, '-')
	if dash <= 0 || len(ws)-dash != 7 {
		return false
	}
	for _, c := range ws[:dash] {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return ws[dash+3:] == WorkspaceCheck(ws[:dash+3])
}
