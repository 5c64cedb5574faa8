package target

import (
	"errors"
	"testing"
)

// FuzzParseCompound: any string either compiles into a target that can be
// matched against any minion, or is refused with ErrTarget; never a panic.
func FuzzParseCompound(f *testing.F) {
	for _, s := range []string{
		"G@os:Debian and or web*",
		"( G@os:Debian or db1 ) and not G@roles:lb",
		"(E@web(1|2)) not L@a,b or S@10.0.0.0/8",
		"N@nested or N@cycleA and P@os:^deb",
		"I@role:db:* and J|@tier|name|f.*",
		"G@*:debian",
		"G@disks:-1:sda:*",
	} {
		f.Add(s)
	}
	o := Options{Nodegroups: nodegroups, Pillar: true}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []string{"compound", "compound_pillar_exact"} {
			tg, err := ParseWith(s, typ, o)
			if err != nil {
				if !errors.Is(err, ErrTarget) {
					t.Fatalf("ParseWith(%q, %q) error %v is not ErrTarget", s, typ, err)
				}
				continue
			}
			for _, m := range minions {
				tg.Match(m)
			}
		}
	})
}
