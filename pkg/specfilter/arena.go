package specfilter

// docArena allocates the Values, member slices and short texts of one parsed
// document. A document is read whole and dropped whole, so allocating its
// 100,000 Values (the Stripe spec) one by one would cost time, garbage
// collector work and size-class padding for nothing. The parsers collect a
// collection's children in a scratch stack and copy them here once the
// collection ends, so every slice is exactly its length (its capacity too:
// an append to it reallocates instead of overwriting a neighbour).
type docArena struct {
	values  []Value
	members []Member
	texts   map[string]string
}

const (
	arenaValues  = 512
	arenaMembers = 2048
	// Texts up to maxInterned bytes are interned: names and short values
	// (type, description, string, object) repeat throughout a spec.
	maxInterned = 32
	// maxTexts bounds the interning table, whose entries cost more than
	// they save once the short texts stop repeating.
	maxTexts = 1 << 16
)

func (a *docArena) value() *Value {
	if len(a.values) == 0 {
		a.values = make([]Value, arenaValues)
	}
	v := &a.values[0]
	a.values = a.values[1:]
	return v
}

// copyMembers returns ms copied into the arena (an empty, non-nil slice for
// none).
func (a *docArena) copyMembers(ms []Member) []Member {
	n := len(ms)
	switch {
	case n == 0:
		return []Member{}
	case n > arenaMembers/8:
		return append(make([]Member, 0, n), ms...)
	case len(a.members) < n:
		a.members = make([]Member, arenaMembers)
	}
	out := a.members[:n:n]
	copy(out, ms)
	a.members = a.members[n:]
	return out
}

// text returns b as a string, interned when short.
func (a *docArena) text(b []byte) string {
	if len(b) > maxInterned {
		return string(b)
	}
	if s, ok := a.texts[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(a.texts) < maxTexts {
		if a.texts == nil {
			a.texts = make(map[string]string, 1024)
		}
		a.texts[s] = s
	}
	return s
}
