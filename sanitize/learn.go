package sanitize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/agentvcr/agentvcr/history"
)

// Learn reads the originals a document's known fields hold, without
// rewriting it. It checks the shape of recorded history (version, surface,
// rows with seq, type and payload); Sanitize finds malformed JSON.
func (s *Sanitizer) Learn(doc []byte, file string) error {
	_, err := s.learn(doc, file)
	return err
}

// docMeta is what the rewrite needs of a learned document: each row's seq
// and type, in document order, and where the stamp goes.
type docMeta struct {
	rows  []rowMeta
	stamp edit
}

type rowMeta struct {
	seq int64
	typ string
}

// learn validates a document and learns from its known fields, once per
// distinct document.
func (s *Sanitizer) learn(doc []byte, file string) (*docMeta, error) {
	sum := maphash.Bytes(s.seed, doc)
	if meta, ok := s.learned[sum]; ok {
		return meta, nil
	}
	// The document is read as recorder load reads it, with the same
	// errors: a file load would refuse is never stamped.
	if err := readable(doc, file); err != nil {
		return nil, err
	}
	src := asString(doc)
	if !strings.HasPrefix(strings.TrimLeft(src, " \t\r\n"), "{") {
		return nil, invalid(file, "", "the top level must be a JSON object")
	}
	// The top-level fields, read in one pass that jumps over the events.
	var version, surface, exporter, identities gjson.Result
	var events string
	var docFields []rowField
	parse := func(value string, at int) gjson.Result {
		r := gjson.Parse(value)
		r.Index = at
		return r
	}
	eachField(src, 0, func(key, value string, at int) {
		switch key {
		case "version":
			version = parse(value, at)
		case "surface":
			surface = parse(value, at)
		case "events":
			events = value
		case "exporter":
			exporter = parse(value, at)
		case "identities":
			identities = parse(value, at)
		}
		if s.tries.document.kids[key] != nil {
			docFields = append(docFields, rowField{key, value})
		}
	})
	if exporter.Get("sanitizer").Exists() && !s.force {
		return nil, fmt.Errorf("%s: %w", orInput(file), ErrStamped)
	}
	if (version.Raw != "1" || surface.Str != "slack" && surface.Str != "web" || !strings.HasPrefix(events, "[")) && !json.Valid(doc) {
		return nil, invalid(file, "", "malformed JSON: the file is truncated or is not JSON")
	}
	switch {
	case version.Type != gjson.Number || version.Raw != "1":
		return nil, invalid(file, "version", "must be 1, got %s", orMissing(version))
	case surface.Str != "slack" && surface.Str != "web":
		return nil, invalid(file, "surface", "must be \"slack\" or \"web\", got %s", orMissing(surface))
	case !strings.HasPrefix(events, "["):
		return nil, invalid(file, "events", "must be an array, got %s", orMissing(gjson.Parse(events)))
	}
	for _, f := range docFields {
		s.learnAt(gjson.Result{}, gjson.Parse(f.value), s.tries.document.kids[f.key], false)
	}
	identities.ForEach(func(_, id gjson.Result) bool {
		s.learnTrie(id, s.tries.identities, true)
		return true
	})
	meta := &docMeta{stamp: s.stampEdit(exporter, surface)}
	var err error
	eachElement(events, 0, func(start int) (end int) {
		if err != nil {
			return skipValue(events, start)
		}
		// One pass over the row's fields: what validation needs, and the
		// fields some rule may start at.
		var seq, typ, payload string
		var fields []rowField
		isObject := events[start] == '{'
		if isObject {
			end = eachField(events, start, func(key, value string, _ int) {
				switch key {
				case "seq":
					seq = value
				case "type":
					typ = value
				case "payload":
					payload = value
				}
				if s.tries.topKeys[key] {
					fields = append(fields, rowField{key, value})
				}
			})
		} else {
			end = skipValue(events, start)
		}
		seqN, seqErr := strconv.ParseInt(seq, 10, 64)
		field := ""
		switch {
		case !isObject:
		case seqErr != nil || seqN < 0:
			field = "seq"
		case !strings.HasPrefix(typ, `"`):
			field = "type"
		case !strings.HasPrefix(payload, "{"):
			field = "payload"
		default:
			typeName := gjson.Parse(typ).Str
			meta.rows = append(meta.rows, rowMeta{seqN, strings.Clone(typeName)})
			if t := s.tries.events(typeName); t != nil {
				parent := gjson.Parse(events[start:end])
				for _, f := range fields {
					if kid := t.kids[f.key]; kid != nil {
						s.learnAt(parent, gjson.Parse(f.value), kid, false)
					}
				}
			}
			return end
		}
		err = &history.RowError{File: file, Index: len(meta.rows), Seq: -1, Field: field,
			Err: fmt.Errorf("%w: missing or of the wrong type", history.ErrInvalid)}
		return end
	})
	if err != nil {
		if !json.Valid(doc) {
			return nil, invalid(file, "", "malformed JSON: the file is truncated or is not JSON")
		}
		return nil, err
	}
	s.learnText(src)
	s.learned[sum] = meta
	return meta, nil
}

// readable reads a document with package history's reader, as the loader
// does, and returns the first problem it finds. The sanitizer's stamp is
// not a field the reader knows of yet: the exporter object is read as the
// reader reads it, which keeps unknown keys.
func readable(doc []byte, file string) error {
	r := history.NewReader(bytes.NewReader(doc), file)
	for {
		if _, err := r.Next(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func invalid(file, field, format string, args ...any) error {
	return &history.FormatError{File: file, Offset: -1, Field: field,
		Err: fmt.Errorf("%w: %s", history.ErrInvalid, fmt.Sprintf(format, args...))}
}

// rowField is one top-level field of a row, raw.
type rowField struct {
	key   string
	value string
}

// learnTrie learns the values the rules of t name in v, visiting each
// field once however many rules share its path.
func (s *Sanitizer) learnTrie(v gjson.Result, t *ruleTrie, identity bool) {
	if t == nil || len(t.kids) == 0 {
		return
	}
	switch {
	case t.kids["#"] != nil && v.IsArray():
		kid := t.kids["#"]
		v.ForEach(func(_, item gjson.Result) bool {
			s.learnAt(v, item, kid, identity)
			return true
		})
	case v.IsObject():
		// One pass over the object's fields, jumping over the long ones.
		eachField(v.Raw, 0, func(key, value string, _ int) {
			if kid := t.kids[key]; kid != nil {
				s.learnAt(v, gjson.Parse(value), kid, identity)
			}
		})
	}
}

// learnAt learns the value at one trie node, whose parent object is parent.
func (s *Sanitizer) learnAt(parent, v gjson.Result, t *ruleTrie, identity bool) {
	for _, r := range t.rules {
		if r.UnlessBot && parent.Get("isBot").Bool() {
			continue
		}
		if v.IsArray() {
			v.ForEach(func(_, item gjson.Result) bool {
				if item.Type == gjson.String {
					s.learnValue(r.Kind, item.Str, identity)
				}
				return true
			})
		} else if v.Type == gjson.String {
			s.learnValue(r.Kind, v.Str, identity)
		}
	}
	s.learnTrie(v, t, identity)
}

// learnValue records an original of a rule kind under the kind of value it
// is.
func (s *Sanitizer) learnValue(k RuleKind, v string, identity bool) {
	v = strings.TrimSpace(v)
	switch k {
	case ruleUserRef:
		switch {
		case isSlackID(v):
			s.dict.add(KindSlackID, v)
		case strings.HasPrefix(v, "dashboard:"):
			s.dict.add(KindDashboardID, v)
		case len(findEmails(v)) == 1:
			s.learnValue(RuleKind(KindEmail), v, identity)
		case v != "" && strings.Trim(v, "0123456789") == "":
			s.dict.add(KindNumericID, v) // GitHub's user ids, in text and as JSON numbers
		default:
			s.dict.add(KindSubject, v)
		}
	case ruleUserName:
		if strings.Contains(v, " ") {
			s.learnName(v, identity)
		} else {
			s.dict.add(KindHandle, v)
		}
	case ruleConversationID:
		if parts := strings.Split(v, ":"); len(parts) == 3 && parts[0] == "slack" && isSlackID(parts[1]) {
			s.dict.add(KindSlackID, parts[1])
		} else if m := localIDRe.FindStringSubmatch(v); m != nil {
			s.dict.add(KindHexID, m[1])
		}
	case RuleKind(KindName):
		s.learnName(v, identity)
	case RuleKind(KindEmail):
		if e := findEmails(v); len(e) == 1 && e[0] == [2]int{0, len(v)} {
			s.dict.add(KindEmail, strings.ToLower(v))
			// The local part is its owner's handle too: ada.quill@corp.io
			// stands for ada.quill wherever else it is written.
			if local := v[:strings.LastIndexByte(v, '@')]; strings.ContainsAny(local, "._-") {
				s.dict.add(KindHandle, strings.ToLower(local))
			}
		}
	case RuleKind(KindSlackID):
		if isSlackID(v) {
			s.dict.add(KindSlackID, v)
		}
	default:
		s.dict.add(Kind(k), v)
	}
}

// learnLabelsIn learns the labels of the Slack markup in a text
// (<@U1|ada.quill>, <#C1|hr-layoffs>), so that the same label is replaced
// wherever else the text names it.
func (s *Sanitizer) learnLabelsIn(text string) {
	for _, m := range markupRe.FindAllStringSubmatchIndex(text, -1) {
		k, start, end := markupKind(text[m[2]:m[3]], text[m[4]:m[5]])
		label := text[m[4]+start : m[4]+end]
		switch {
		case k == KindName:
			s.learnName(label, true)
		case k == KindChannelName && englishWord(label):
			// #general, #random: the markup is replaced where it stands,
			// but the word is not hunted in every text.
		default:
			s.dict.add(k, label)
		}
	}
}

// learnName records a full name and, for names from identity rows and the
// names dictionary, its first and last parts as words of their own.
//
// It learns the spellings people use for a name too: without its
// apostrophe or with a space for it (OBrien, O Brien for O'Brien), a
// hyphenated part as two words, joined or apart (Anne Marie, AnneMarie for
// Anne-Marie), and the whole name written as one word (NadiaNoor).
func (s *Sanitizer) learnName(v string, parts bool) {
	v = strings.Join(strings.Fields(v), " ")
	s.dict.add(KindName, v)
	f := strings.Fields(v)
	if !parts {
		return
	}
	if len(f) == 1 {
		s.dict.add(KindFirstName, f[0])
		return
	}
	s.dict.add(KindFirstName, f[0])
	s.dict.add(KindLastName, f[len(f)-1])
	s.dict.add(KindName, strings.Join(f, ""))
	// Slugs and file names join the parts (imogen-hale-4b2a1,
	// Imogen_Hale_cv.pdf): as handles, they match in any letter case,
	// where a part that is an English word alone matches only as written.
	for _, sep := range []string{".", "_", "-"} {
		s.dict.add(KindHandle, strings.ToLower(strings.Join(f, sep)))
	}
	// jkowalski for Jakub Kowalski: the initial and the surname, as
	// accounts are often named.
	if last := f[len(f)-1]; utf8.RuneCountInString(last) >= 4 {
		first, _ := utf8.DecodeRuneInString(f[0])
		s.dict.add(KindHandle, strings.ToLower(string(first)+last))
	}
	for i, p := range f {
		k := KindFirstName
		if i == len(f)-1 {
			k = KindLastName
		}
		if strings.ContainsAny(p, "'’") {
			s.dict.add(k, strings.NewReplacer("'", "", "’", "").Replace(p))
			s.dict.add(KindName, strings.NewReplacer("'", " ", "’", " ").Replace(p))
		}
		if sub := strings.FieldsFunc(p, func(r rune) bool { return r == '-' || r == '‐' }); len(sub) > 1 {
			for _, w := range sub {
				s.dict.add(k, w)
			}
			s.dict.add(KindName, strings.Join(sub, " "))
			s.dict.add(k, strings.Join(sub, ""))
		}
	}
}
