package ddns

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// FuzzFQDN: any name either is refused or becomes a fully qualified name
// inside the zone.
func FuzzFQDN(f *testing.F) {
	for _, s := range [][2]string{{"example.com", "web1"}, {"example.com", "example.com-db"}, {"a.b", "x.a.b."},
		{"example.com", "@"}, {"example.com", "web1.other.org."}, {"x", "..."}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, zone, name string) {
		fq, err := FQDN(zone, name)
		if err != nil {
			return
		}
		if _, ok := dns.IsDomainName(fq); !ok || !strings.HasSuffix(fq, ".") || !dns.IsSubDomain(dns.CanonicalName(strings.TrimSpace(zone)), fq) {
			t.Errorf("FQDN(%q, %q) = %q", zone, name, fq)
		}
	})
}

// FuzzLoadKeyFile: no key file makes the parser panic, and a key read is
// usable.
func FuzzLoadKeyFile(f *testing.F) {
	for _, s := range []string{`{"k.": "c2VjcmV0"}`, `key "k" { algorithm hmac-sha256; secret "c2VjcmV0"; };`,
		`key k {};`, `{`, "", `key "a" { secret "x"; algorithm md5; }; key "b" {`} {
		f.Add(s, "")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text, keyname string) {
		p := filepath.Join(dir, "key")
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := LoadKeyFile(p, keyname, "")
		if err != nil {
			return
		}
		if k.Name == "" || k.Algorithm == "" || len(k.secret) == 0 {
			t.Errorf("key %+v from %q", k, text)
		}
	})
}
