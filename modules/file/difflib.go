package file

import (
	"fmt"
	"sort"
	"strings"
)

// UnifiedDiff is Python's difflib.unified_diff(a, b) with its defaults (no
// file names, three lines of context, "\n" ending the header lines): the
// diff Salt shows in changes. Lines are compared whole, with whatever line
// ending they carry. The matching is difflib's SequenceMatcher (longest
// matching blocks, popular lines of long files ignored as anchors), not a
// minimal edit script, so that a diff reads as Salt's does.
func UnifiedDiff(a, b []string) []string {
	var out []string
	for i, group := range groupedOpcodes(a, b, 3) {
		if i == 0 {
			out = append(out, "--- \n", "+++ \n")
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@\n", unifiedRange(first.i1, last.i2), unifiedRange(first.j1, last.j2)))
		for _, op := range group {
			if op.tag == 'e' {
				for _, l := range a[op.i1:op.i2] {
					out = append(out, " "+l)
				}
				continue
			}
			if op.tag == 'r' || op.tag == 'd' {
				for _, l := range a[op.i1:op.i2] {
					out = append(out, "-"+l)
				}
			}
			if op.tag == 'r' || op.tag == 'i' {
				for _, l := range b[op.j1:op.j2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return out
}

// GetDiff is Salt's stringutils.get_diff: the unified diff joined.
func GetDiff(a, b []string) string { return strings.Join(UnifiedDiff(a, b), "") }

func unifiedRange(start, stop int) string {
	beginning, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(beginning)
	}
	if length == 0 {
		beginning--
	}
	return fmt.Sprintf("%d,%d", beginning, length)
}

// opcode is one of SequenceMatcher's opcodes: tag 'e'qual, 'r'eplace,
// 'd'elete or 'i'nsert, a[i1:i2] against b[j1:j2].
type opcode struct {
	tag            byte
	i1, i2, j1, j2 int
}

type match struct{ i, j, size int }

// matcher is difflib.SequenceMatcher without a junk function.
type matcher struct {
	a, b []string
	b2j  map[string][]int
}

func newMatcher(a, b []string) *matcher {
	m := &matcher{a: a, b: b, b2j: map[string][]int{}}
	for i, l := range b {
		m.b2j[l] = append(m.b2j[l], i)
	}
	// autojunk: in a long b, lines that occur in more than 1% of it do
	// not anchor matches.
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for l, idx := range m.b2j {
			if len(idx) > ntest {
				delete(m.b2j, l)
			}
		}
	}
	return m
}

func (m *matcher) longest(alo, ahi, blo, bhi int) match {
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		newj2len := map[int]int{}
		for _, j := range m.b2j[m.a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			newj2len[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = newj2len
	}
	for besti > alo && bestj > blo && m.a[besti-1] == m.b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && m.a[besti+bestsize] == m.b[bestj+bestsize] {
		bestsize++
	}
	return match{besti, bestj, bestsize}
}

func (m *matcher) matchingBlocks() []match {
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(m.a), 0, len(m.b)}}
	var blocks []match
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		x := m.longest(s.alo, s.ahi, s.blo, s.bhi)
		if x.size == 0 {
			continue
		}
		blocks = append(blocks, x)
		if s.alo < x.i && s.blo < x.j {
			queue = append(queue, span{s.alo, x.i, s.blo, x.j})
		}
		if x.i+x.size < s.ahi && x.j+x.size < s.bhi {
			queue = append(queue, span{x.i + x.size, s.ahi, x.j + x.size, s.bhi})
		}
	}
	sort.Slice(blocks, func(p, q int) bool {
		if blocks[p].i != blocks[q].i {
			return blocks[p].i < blocks[q].i
		}
		if blocks[p].j != blocks[q].j {
			return blocks[p].j < blocks[q].j
		}
		return blocks[p].size < blocks[q].size
	})
	var out []match
	cur := match{}
	for _, x := range blocks {
		if cur.i+cur.size == x.i && cur.j+cur.size == x.j {
			cur.size += x.size
			continue
		}
		if cur.size > 0 {
			out = append(out, cur)
		}
		cur = x
	}
	if cur.size > 0 {
		out = append(out, cur)
	}
	return append(out, match{len(m.a), len(m.b), 0})
}

func (m *matcher) opcodes() []opcode {
	var out []opcode
	i, j := 0, 0
	for _, x := range m.matchingBlocks() {
		var tag byte
		switch {
		case i < x.i && j < x.j:
			tag = 'r'
		case i < x.i:
			tag = 'd'
		case j < x.j:
			tag = 'i'
		}
		if tag != 0 {
			out = append(out, opcode{tag, i, x.i, j, x.j})
		}
		i, j = x.i+x.size, x.j+x.size
		if x.size > 0 {
			out = append(out, opcode{'e', x.i, i, x.j, j})
		}
	}
	return out
}

// groupedOpcodes is SequenceMatcher.get_grouped_opcodes(n): the changes
// with n lines of context, split where more than 2n lines are unchanged.
func groupedOpcodes(a, b []string, n int) [][]opcode {
	codes := newMatcher(a, b).opcodes()
	if len(codes) == 0 {
		codes = []opcode{{'e', 0, 1, 0, 1}}
	}
	if c := &codes[0]; c.tag == 'e' {
		c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
	}
	if c := &codes[len(codes)-1]; c.tag == 'e' {
		c.i2, c.j2 = min(c.i2, c.i1+n), min(c.j2, c.j1+n)
	}
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > 2*n {
			group = append(group, opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c.i1, c.j1 = max(c.i1, c.i2-n), max(c.j1, c.j2-n)
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

// SplitLines is Python's str.splitlines(keepends): lines end at \n, \r\n,
// \r, \v, \f, \x1c-\x1e, \x85, \u2028 and \u2029.
func SplitLines(s string, keepends bool) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		end, width := -1, 0
		switch c := s[i]; {
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			end, width = i, 2
		case c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x1c || c == 0x1d || c == 0x1e:
			end, width = i, 1
		case c == 0xc2 && i+1 < len(s) && s[i+1] == 0x85:
			end, width = i, 2
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			end, width = i, 3
		}
		if end < 0 {
			i++
			continue
		}
		if keepends {
			out = append(out, s[start:end+width])
		} else {
			out = append(out, s[start:end])
		}
		i = end + width
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
