package fnmatch

import (
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// defaultSetCache bounds the memory a Set spends on cached DFA
// states. Realistic tags need a few hundred states; a flood of unusual tags
// flushes the cache rather than growing it without limit.
const defaultSetCache = 8 << 20

// Set matches a tag against many globs at once, with the same answers as
// matching each Glob in turn. The bus matches every event against every
// subscription and reaction, so the cost must not grow with the number of
// patterns: a Set runs all of them together as one automaton, walking
// the tag once.
//
// The automaton is a DFA built lazily: each state is the set of positions the
// patterns can be at, and a transition is computed the first time a tag needs
// it and then cached. Once warm, matching costs one table lookup per
// character. A Set is safe for concurrent use.
type Set struct {
	atoms []atom
	// owner[p] is the index of the pattern position p belongs to.
	owner  []int32
	starts []int32

	// Runes fall into equivalence classes that every atom treats alike, so
	// that a state needs one transition per class, not per rune. bounds holds
	// each class's lowest rune, ascending; ascii caches the class of every
	// ASCII character.
	bounds []rune
	ascii  [utf8.RuneSelf]int32

	start atomic.Pointer[dfaState]

	mu       sync.Mutex // guards everything below, and writes to dfaState.next
	states   map[string]*dfaState
	size     int      // bytes held by states
	maxSize  int      // size beyond which the cache is flushed
	mark     []uint32 // mark[p] == gen: position p is in the set being built
	gen      uint32
	scratch  []int32
	scratchK []byte
}

type atomKind uint8

const (
	atomRune  atomKind = iota // one literal character
	atomAny                   // ?
	atomClass                 // [seq]
	atomStar                  // *
	atomEnd                   // past the pattern's last atom: a match
)

type atom struct {
	kind  atomKind
	r     rune
	class *charClass
}

// dfaState is a set of pattern positions. Only next changes after creation.
type dfaState struct {
	// key holds the sorted positions, 4 little-endian bytes each; it is also
	// the state's key in Set.states.
	key    string
	accept []int // patterns that match a tag ending in this state, ascending
	dead   bool  // no position left: nothing can match any more
	next   []atomic.Pointer[dfaState]
}

// NewSet compiles patterns (as Compile does) into one set; Match
// reports matches by index into patterns.
func NewSet(patterns []string) *Set {
	s := &Set{maxSize: defaultSetCache}
	bounds := []rune{0}
	for i, pat := range patterns {
		s.starts = append(s.starts, int32(len(s.atoms)))
		for _, t := range Compile(pat).toks {
			switch t.kind {
			case tokLit:
				for k := 0; k < len(t.lit); {
					r, w := decodeRune(t.lit[k:])
					s.atoms = append(s.atoms, atom{kind: atomRune, r: r})
					bounds = append(bounds, r, r+1)
					k += w
				}
			case tokAny:
				s.atoms = append(s.atoms, atom{kind: atomAny})
			case tokClass:
				s.atoms = append(s.atoms, atom{kind: atomClass, class: t.class})
				for _, rg := range t.class.ranges {
					bounds = append(bounds, rg.lo, rg.hi+1)
				}
			case tokStar:
				s.atoms = append(s.atoms, atom{kind: atomStar})
			}
		}
		s.atoms = append(s.atoms, atom{kind: atomEnd})
		for len(s.owner) < len(s.atoms) {
			s.owner = append(s.owner, int32(i))
		}
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	for len(bounds) > 0 && bounds[len(bounds)-1] > utf8.MaxRune {
		bounds = bounds[:len(bounds)-1]
	}
	s.bounds = bounds
	for r := range s.ascii {
		s.ascii[r] = s.classOf(rune(r))
	}
	s.mark = make([]uint32, len(s.atoms))
	s.reset()
	return s
}

// Match appends to dst the indexes, ascending, of the patterns tag matches.
func (s *Set) Match(tag string, dst []int) []int {
	st := s.start.Load()
	for i := 0; i < len(tag) && !st.dead; {
		var c int32
		if b := tag[i]; b < utf8.RuneSelf {
			c = s.ascii[b]
			i++
		} else {
			r, w := decodeRune(tag[i:])
			c = s.classOf(r)
			i += w
		}
		next := st.next[c].Load()
		if next == nil {
			next = s.step(st, c)
		}
		st = next
	}
	return append(dst, st.accept...)
}

// classOf returns the equivalence class of r.
func (s *Set) classOf(r rune) int32 {
	i, found := slices.BinarySearch(s.bounds, r)
	if !found {
		i-- // bounds[0] is 0, so i >= 0
	}
	return int32(i)
}

// reset empties the state cache and starts over from a fresh start state.
// Goroutines still walking old states keep a consistent view: a state's
// meaning never depends on the cache it came from. s.mu must be held, or s
// not yet shared.
func (s *Set) reset() {
	s.states = make(map[string]*dfaState)
	s.size = 0
	s.nextGen()
	set := s.scratch[:0]
	for _, p := range s.starts {
		set = s.addClosure(set, p)
	}
	s.start.Store(s.intern(set))
}

// nextGen empties the set that mark describes.
func (s *Set) nextGen() {
	s.gen++
	if s.gen == 0 { // wrapped: old marks could pass for new ones
		clear(s.mark)
		s.gen = 1
	}
}

// addClosure adds position p to set, and the position after it while a `*`,
// which may match nothing, stands at p.
func (s *Set) addClosure(set []int32, p int32) []int32 {
	for {
		if s.mark[p] != s.gen {
			s.mark[p] = s.gen
			set = append(set, p)
		}
		if s.atoms[p].kind != atomStar {
			return set
		}
		p++
	}
}

// step computes, caches and returns the state st moves to on a character of
// class c.
func (s *Set) step(st *dfaState, c int32) *dfaState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if next := st.next[c].Load(); next != nil {
		return next // another goroutine got here first
	}
	if s.size > s.maxSize {
		s.reset()
	}
	r := s.bounds[c] // every rune of the class moves every atom alike
	s.nextGen()
	set := s.scratch[:0]
	for k := 0; k < len(st.key); k += 4 {
		p := position(st.key[k:])
		switch a := &s.atoms[p]; a.kind {
		case atomStar:
			set = s.addClosure(set, p)
		case atomRune:
			if a.r == r {
				set = s.addClosure(set, p+1)
			}
		case atomAny:
			set = s.addClosure(set, p+1)
		case atomClass:
			if a.class.match(r) {
				set = s.addClosure(set, p+1)
			}
		}
	}
	next := s.intern(set)
	st.next[c].Store(next)
	return next
}

// intern returns the cached state for the positions in set, creating it if
// needed. set is reordered and may be overwritten afterwards.
func (s *Set) intern(set []int32) *dfaState {
	s.scratch = set
	slices.Sort(set) // a canonical key, and accept in pattern order
	key := s.scratchK[:0]
	for _, p := range set {
		key = append(key, byte(p), byte(p>>8), byte(p>>16), byte(p>>24))
	}
	s.scratchK = key
	if st, ok := s.states[string(key)]; ok {
		return st
	}
	st := &dfaState{
		key:  string(key),
		dead: len(set) == 0,
		next: make([]atomic.Pointer[dfaState], len(s.bounds)),
	}
	for _, p := range set {
		if s.atoms[p].kind == atomEnd {
			st.accept = append(st.accept, int(s.owner[p]))
		}
	}
	s.states[st.key] = st
	s.size += len(st.key) + 8*len(st.next) + 8*len(st.accept) + 128
	return st
}

// position decodes the first position in a state key.
func position(k string) int32 {
	return int32(uint32(k[0]) | uint32(k[1])<<8 | uint32(k[2])<<16 | uint32(k[3])<<24)
}
