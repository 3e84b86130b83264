package sanitize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/history"
)

// PeopleKind marks a people file.
const PeopleKind = "agentvcr-people"

// People is what a database knows of its people: every identity row with
// its user, and the users no identity belongs to. The sanitizer learns
// them all, so that a person named in a conversation they took no part in
// ("draft a note to Dana") is found too. It is personal data: recorder
// export --people writes it with mode 0600, for the user's machine only,
// and sanitize check refuses it in a tree.
type People struct {
	Kind       string             `json:"kind"`
	Version    int                `json:"version"`
	Profile    string             `json:"profile,omitempty"`
	Identities []history.Identity `json:"identities"`
	Users      []history.User     `json:"users,omitempty"`
}

// IsPeopleFile reports whether a JSON document is a people file.
func IsPeopleFile(doc []byte) bool {
	return gjson.GetBytes(doc, "kind").String() == PeopleKind
}

// ReadPeople reads a people file; name is used in errors.
func ReadPeople(r io.Reader, name string) (*People, error) {
	doc, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("people file %s: %w", name, err)
	}
	if !IsPeopleFile(doc) || gjson.GetBytes(doc, "version").Int() != 1 {
		return nil, fmt.Errorf("%s is not a people file of version 1: write one with recorder export --people", name)
	}
	var p People
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		// Not the error's text: an unknown field's name, or a value that
		// is not of its field's type, may be personal.
		return nil, fmt.Errorf("people file %s: not the shape recorder export --people writes (an unknown field, or a field of the wrong type): write it again", name)
	}
	return &p, nil
}

// LearnPeople learns every value the identity rules name in the people
// given.
func (s *Sanitizer) LearnPeople(p *People) error {
	for _, id := range p.Identities {
		b, err := json.Marshal(id)
		if err != nil {
			return err
		}
		s.learnTrie(gjson.ParseBytes(b), s.tries.identities, true)
	}
	for _, u := range p.Users {
		b, err := json.Marshal(struct {
			User history.User `json:"user"`
		}{u})
		if err != nil {
			return err
		}
		s.learnTrie(gjson.ParseBytes(b), s.tries.identities, true)
	}
	return nil
}
