package leakcheck

// needleSet finds learned values in text for the leak check. It grows as
// the dictionary does, without a rebuild: a value is keyed by its first
// two bytes (a bitset that rules out most positions at the cost of one
// load) and, when it has four bytes or more, by its first four (a hashed
// bitset, then a map); values of two or three bytes are looked up whole
// where a word starts. In a folding set, ASCII letters match in any case
// and ` matches ' (normalize's ASCII form, without writing it); other
// bytes match as they are.
type needleSet struct {
	fold   bool
	first2 [1 << 16 / 64]uint64 // the first two bytes of every needle
	short2 [1 << 16 / 64]uint64 // those of the needles shorter than four
	quads  [1 << quadBits / 64]uint64
	byQuad map[uint32][]int32
	short  map[string][]int32
	ids    map[string]int32 // needle text -> index in texts
	texts  []string
	owners [][]int // needle -> entries of the dictionary
	// inWords is false once a short needle is an id, found anywhere: the
	// short needles are then looked for inside words too.
	inWords bool
}

const quadBits = 18

func newNeedleSet(fold bool) *needleSet {
	return &needleSet{fold: fold, inWords: true, byQuad: map[uint32][]int32{}, short: map[string][]int32{}, ids: map[string]int32{}}
}

// foldByte is a byte as a folding set compares it.
var foldByte = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c) + 'a' - 'A'
	}
	t['`'] = '\''
	return t
}()

func (n *needleSet) key2(a, b byte) uint16 {
	if n.fold {
		a, b = foldByte[a], foldByte[b]
	}
	return uint16(a) | uint16(b)<<8
}

func (n *needleSet) key4(s string, i int) uint32 {
	s = s[i : i+4]
	if n.fold {
		return uint32(foldByte[s[0]]) | uint32(foldByte[s[1]])<<8 | uint32(foldByte[s[2]])<<16 | uint32(foldByte[s[3]])<<24
	}
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

func quadHash(k uint32) uint32 { return (k * 0x9E3779B1) >> (32 - quadBits) }

// add hunts text for the dictionary's entry i; anywhere says it is an id,
// found inside words too. Texts shorter than two bytes are never hunted
// (the dictionary keeps none).
func (n *needleSet) add(text string, i int, anywhere bool) {
	if len(text) < 2 {
		return
	}
	if anywhere && len(text) < 4 {
		n.inWords = false
	}
	if id, ok := n.ids[text]; ok {
		n.owners[id] = append(n.owners[id], i)
		return
	}
	id := int32(len(n.texts))
	n.ids[text] = id
	n.texts = append(n.texts, text)
	n.owners = append(n.owners, []int{i})
	k2 := n.key2(text[0], text[1])
	n.first2[k2/64] |= 1 << (k2 % 64)
	if len(text) < 4 {
		n.short2[k2/64] |= 1 << (k2 % 64)
		key := text
		if n.fold {
			key = foldASCII(text)
		}
		n.short[key] = append(n.short[key], id)
		return
	}
	k4 := n.key4(text, 0)
	h := quadHash(k4)
	n.quads[h/64] |= 1 << (h % 64)
	n.byQuad[k4] = append(n.byQuad[k4], id)
}

func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = foldByte[c]
	}
	return string(b)
}

// equalAt reports whether needle occurs in s at i.
func (n *needleSet) equalAt(s string, i int, needle string) bool {
	if i+len(needle) > len(s) {
		return false
	}
	if !n.fold {
		return s[i:i+len(needle)] == needle
	}
	for j := 0; j < len(needle); j++ {
		if foldByte[s[i+j]] != foldByte[needle[j]] {
			return false
		}
	}
	return true
}

// find calls fn with every occurrence of a needle in s, by position: its
// span and the needle's index.
func (n *needleSet) find(s string, fn func(start, end int, id int32)) {
	if len(n.texts) == 0 {
		return
	}
	for i := 0; i+1 < len(s); i++ {
		k2 := n.key2(s[i], s[i+1])
		if n.first2[k2/64]&(1<<(k2%64)) == 0 {
			continue
		}
		if i+4 <= len(s) {
			k4 := n.key4(s, i)
			if h := quadHash(k4); n.quads[h/64]&(1<<(h%64)) != 0 {
				for _, id := range n.byQuad[k4] {
					if t := n.texts[id]; n.equalAt(s, i, t) {
						fn(i, i+len(t), id)
					}
				}
			}
		}
		// The short needles are words: where one letter follows another,
		// none may start (unless one is an id).
		if n.short2[k2/64]&(1<<(k2%64)) != 0 && (i == 0 || !n.inWords || !isLetterASCII(s[i-1]) || !isLetterASCII(s[i])) {
			var b [3]byte
			for l := 2; l <= 3 && i+l <= len(s); l++ {
				copy(b[:], s[i:i+l])
				if n.fold {
					b[0], b[1], b[2] = foldByte[b[0]], foldByte[b[1]], foldByte[b[2]]
				}
				for _, id := range n.short[string(b[:l])] {
					if n.equalAt(s, i, n.texts[id]) {
						fn(i, i+l, id)
					}
				}
			}
		}
	}
}

func isLetterASCII(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
