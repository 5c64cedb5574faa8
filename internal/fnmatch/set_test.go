package fnmatch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSetMatch(t *testing.T) {
	set := NewSet([]string{
		"salt/cloud/*/created", // 0
		"salt/job/*/ret/*",     // 1
		"salt/minion/*/start",  // 2
		"salt/auth",            // 3
		"*",                    // 4
		"salt/*",               // 5
		"salt/job/*/ret/web?",  // 6
		"web[0-9]/[!x]*",       // 7
		"salt/auth",            // 8: a duplicate matches too
		"",                     // 9
		"café/?",               // 10
		"[z-a]*",               // 11: never matches
	})
	tests := []struct {
		tag  string
		want []int
	}{
		{"salt/cloud/web1/created", []int{0, 4, 5}},
		{"salt/cloud/eu/web1/created", []int{0, 4, 5}},
		{"salt/job/20261121224814123456/ret/web1", []int{1, 4, 5, 6}},
		{"salt/job/1/ret/web12", []int{1, 4, 5}},
		{"salt/minion/db1/start", []int{2, 4, 5}},
		{"salt/auth", []int{3, 4, 5, 8}},
		{"salt/authx", []int{4, 5}},
		{"web1/y", []int{4, 7}},
		{"web1/x", []int{4}},
		{"café/日", []int{4, 10}},
		{"café/日本", []int{4}},
		{"", []int{4, 9}},
		{"a", []int{4}},
	}
	for _, tt := range tests {
		if got := set.Match(tt.tag, nil); !slices.Equal(got, tt.want) {
			t.Errorf("Match(%q) = %v, want %v", tt.tag, got, tt.want)
		}
	}
	if got := set.Match("salt/auth", []int{-1}); !slices.Equal(got, []int{-1, 3, 4, 5, 8}) {
		t.Errorf("Match with dst [-1] = %v, want the matches appended", got)
	}
	if got := NewSet(nil).Match("salt/auth", nil); len(got) != 0 {
		t.Errorf("empty set matched %v", got)
	}
}

// matchEach is what a Set must agree with: every Glob in turn.
func matchEach(globs []*Glob, tag string) []int {
	var idx []int
	for i, g := range globs {
		if g.Match(tag) {
			idx = append(idx, i)
		}
	}
	return idx
}

func compileAll(patterns []string) []*Glob {
	globs := make([]*Glob, len(patterns))
	for i, p := range patterns {
		globs[i] = Compile(p)
	}
	return globs
}

// randString draws from a small alphabet heavy in metacharacters, multi-byte
// and invalid UTF-8 so that random patterns and tags often interact.
func randString(rng *rand.Rand, maxLen int) string {
	const alphabet = "ab/-!]"
	extra := []string{"*", "?", "[", "é", "\xc3", "\xa9", "z"}
	var b strings.Builder
	for range rng.IntN(maxLen + 1) {
		if k := rng.IntN(len(alphabet) + len(extra)); k < len(alphabet) {
			b.WriteByte(alphabet[k])
		} else {
			b.WriteString(extra[k-len(alphabet)])
		}
	}
	return b.String()
}

func TestSetRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cache := range []int{defaultSetCache, 0} {
		for round := range 200 {
			patterns := make([]string, 1+rng.IntN(20))
			for i := range patterns {
				patterns[i] = randString(rng, 8)
			}
			globs := compileAll(patterns)
			set := NewSet(patterns)
			set.maxSize = cache // 0: flush the cache on every new transition
			for range 50 {
				tag := randString(rng, 10)
				if rng.IntN(4) == 0 {
					tag = patterns[rng.IntN(len(patterns))] // patterns match themselves
				}
				if got, want := set.Match(tag, nil), matchEach(globs, tag); !slices.Equal(got, want) {
					t.Fatalf("cache %d, round %d: %q.Match(%q) = %v, want %v", cache, round, patterns, tag, got, want)
				}
			}
		}
	}
}

func TestSetConcurrent(t *testing.T) {
	patterns := realisticGlobs(200)
	tags := realisticTags(rand.New(rand.NewPCG(3, 4)), 500)
	globs := compileAll(patterns)
	want := make([][]int, len(tags))
	for i, tag := range tags {
		want[i] = matchEach(globs, tag)
	}
	for _, cache := range []int{defaultSetCache, 64 << 10} {
		set := NewSet(patterns)
		set.maxSize = cache
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for w := range 8 {
			wg.Go(func() {
				var dst []int
				for k := range 4 * len(tags) {
					i := (k*7 + w*131) % len(tags)
					if dst = set.Match(tags[i], dst[:0]); !slices.Equal(dst, want[i]) {
						errs <- fmt.Sprintf("cache %d: Match(%q) = %v, want %v", cache, tags[i], dst, want[i])
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

func FuzzSet(f *testing.F) {
	f.Add("salt/cloud/*/created\nsalt/job/*/ret/*\n*\n[!a-]?\n", "salt/cloud/web1/created")
	f.Add("a*b*c\n[]a]\n[a--b]\n\xc3*\n", "a]b-c\xc3\xa9")
	f.Add("\n?\n??\n", "é")
	f.Fuzz(func(t *testing.T, patterns, tag string) {
		pats := strings.Split(patterns, "\n")
		if len(pats) > 32 {
			pats = pats[:32]
		}
		set := NewSet(pats)
		want := matchEach(compileAll(pats), tag)
		if got := set.Match(tag, nil); !slices.Equal(got, want) {
			t.Fatalf("%q.Match(%q) = %v, want %v", pats, tag, got, want)
		}
		// Again, now from the cache.
		if got := set.Match(tag, nil); !slices.Equal(got, want) {
			t.Fatalf("%q.Match(%q) from cache = %v, want %v", pats, tag, got, want)
		}
	})
}

// realisticGlobs returns n patterns of the kinds reactors and subscriptions
// use: Salt tags with wildcards, per-application and per-customer globs, some
// exact tags and some with `?` and classes.
func realisticGlobs(n int) []string {
	pats := make([]string, n)
	for i := range pats {
		switch i % 8 {
		case 0:
			pats[i] = fmt.Sprintf("salt/job/*/ret/web%d*", i)
		case 1:
			pats[i] = fmt.Sprintf("app%d/*/deploy", i)
		case 2:
			pats[i] = fmt.Sprintf("myco/%d/*", i)
		case 3:
			pats[i] = fmt.Sprintf("salt/minion/web%d/start", i) // exact
		case 4:
			pats[i] = []string{"salt/cloud/*/created", "salt/cloud/*/destroyed", "salt/auth", "salt/key", "salt/minion/*/start", "salt/netapi/hook/*"}[i/8%6]
		case 5:
			pats[i] = fmt.Sprintf("brine/ddns/zone%d.example/updated", i) // exact
		case 6:
			pats[i] = fmt.Sprintf("salt/minion/db%d?/start", i)
		case 7:
			pats[i] = fmt.Sprintf("salt/run/*/ret/[a-m]*%d", i)
		}
	}
	return pats
}

// realisticTags returns n tags like those Salt and brine fire, about half of
// them matched by realisticGlobs(1000).
func realisticTags(rng *rand.Rand, n int) []string {
	tags := make([]string, n)
	for i := range tags {
		k := rng.IntN(1000)
		jid := fmt.Sprintf("2026112122%02d%02d%06d", rng.IntN(60), rng.IntN(60), rng.IntN(1000000))
		switch rng.IntN(10) {
		case 0:
			tags[i] = fmt.Sprintf("salt/job/%s/ret/web%d", jid, k)
		case 1:
			tags[i] = fmt.Sprintf("app%d/prod/deploy", k)
		case 2:
			tags[i] = fmt.Sprintf("myco/%d/backup/done", k)
		case 3:
			tags[i] = fmt.Sprintf("salt/minion/web%d/start", k)
		case 4:
			tags[i] = fmt.Sprintf("salt/cloud/web%d/created", k)
		case 5:
			tags[i] = fmt.Sprintf("brine/ddns/zone%d.example/updated", k)
		case 6:
			tags[i] = fmt.Sprintf("salt/minion/db%d%d/start", k, rng.IntN(10))
		case 7:
			tags[i] = fmt.Sprintf("salt/run/%s/ret/mgr%d", jid, k)
		case 8:
			tags[i] = fmt.Sprintf("salt/job/%s/new", jid)
		case 9:
			tags[i] = "salt/auth"
		}
	}
	return tags
}

func BenchmarkSet1000(b *testing.B) {
	set := NewSet(realisticGlobs(1000))
	tags := realisticTags(rand.New(rand.NewPCG(5, 6)), 4096)
	// Warm the cache, as a running bus would have, and make sure the tags
	// are a mix of matches and misses.
	matched := 0
	var dst []int
	for _, tag := range tags {
		if dst = set.Match(tag, dst[:0]); len(dst) > 0 {
			matched++
		}
	}
	if matched < len(tags)/4 || matched > len(tags)*3/4 {
		b.Fatalf("%d of %d tags match: not a realistic mix", matched, len(tags))
	}
	for i := 0; b.Loop(); i++ {
		dst = set.Match(tags[i%len(tags)], dst[:0])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "matches/s")
}

func BenchmarkGlobMatch(b *testing.B) {
	benchmarks := []struct{ pat, tag string }{
		{"salt/cloud/*/created", "salt/cloud/web1/created"},
		{"salt/job/*/ret/web1*", "salt/job/20261121224814123456/ret/web17"},
		{"salt/minion/web1/start", "salt/minion/web1/start"},
		{"salt/minion/db[0-9]?/start", "salt/minion/db12/start"},
	}
	for _, bm := range benchmarks {
		g := Compile(bm.pat)
		b.Run(bm.pat, func(b *testing.B) {
			for b.Loop() {
				g.Match(bm.tag)
			}
		})
	}
}
