// Package words holds the word lists and tables that the sanitizer's
// rewrite and its leak check (package leakcheck) both read: data, never
// matching code, so the two stay independent readers of the same facts.
// See README.md for where each list comes from.
package words

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"sync"
)

var (
	//go:embed english.txt.gz
	englishGz []byte
	//go:embed given.txt.gz
	givenGz []byte
	//go:embed surnames.txt.gz
	surnamesGz []byte
)

// A Set is a list of words, for lookups. Callers must not change it.
type Set map[string]struct{}

// Has reports whether w is in the set.
func (s Set) Has(w string) bool {
	_, ok := s[w]
	return ok
}

var (
	english  = sync.OnceValue(func() Set { return read(englishGz) })
	given    = sync.OnceValue(func() Set { return read(givenGz) })
	surnames = sync.OnceValue(func() Set { return read(surnamesGz) })
)

// English is the lower-case words of SCOWL's American English list at
// size 50 (Debian's wamerican, 2020.12.07): see SCOWL-COPYRIGHT.
func English() Set { return english() }

// Given is the given names of every locale of @faker-js/faker in a
// script with letter case, NFC: see FAKER-JS-LICENSE.
func Given() Set { return given() }

// Surnames is the surnames of the same locales as Given.
func Surnames() Set { return surnames() }

// Digest is a digest of the three lists, for the sanitizer's rules
// digest: a change of list changes the stamp.
func Digest() string {
	h := sha256.New()
	h.Write(givenGz)
	h.Write(surnamesGz)
	h.Write(englishGz)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// read reads an embedded gzipped list of words, one a line.
func read(gz []byte) Set {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		panic("words: embedded word list: " + err.Error()) // embedded and tested
	}
	words := make(Set, 20000)
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		words[sc.Text()] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		panic("words: embedded word list: " + err.Error())
	}
	return words
}

// IBANLength is the length of the IBANs of a country (ISO 13616), by its
// two-letter code; false for a country without IBANs.
func IBANLength(country string) (int, bool) {
	n, ok := ibanLengths[country]
	return n, ok
}

var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
	"CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
	"FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
	"IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24, "SC": 31, "SE": 24, "SI": 19,
	"SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}

// SlackHost reports whether a lower-case label before .slack.com is one
// of Slack's own hosts (api, files, hooks...), not a workspace's name.
func SlackHost(label string) bool { return slackHosts[label] }

var slackHosts = map[string]bool{"app": true, "api": true, "files": true, "hooks": true, "www": true, "status": true,
	"downloads": true, "edgeapi": true, "wss-primary": true, "enterprise": true, "docs": true, "slack-files": true}
