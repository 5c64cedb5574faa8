package saltapi

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brinehq/brine/internal/py"
)

func testdataPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "eauth", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// eauthACL is the users' permissions beside every file configuration of
// these tests.
var eauthACL = D{
	"dean":  L{"test.*", D{"web*": L{"state.*"}}},
	"gene":  L{".*", "test.*"},
	"*":     L{"grains.items"},
	"ops%":  L{"cmd.*"},
	"trey":  L{"@runner"},
	"mike":  L{"@wheel", D{"@jobs": L{"list_jobs"}}},
	"apr":   L{"test.*"},
	"dora":  L{"test.*"},
	"ann":   L{"test.*"},
	"bob":   L{"test.*"},
	"ünï":   L{"test.*"},
	"colon": L{},
}

type fileCase struct {
	name     string
	config   D // the ^options, with ^filename relative to testdata/eauth
	username string
	password string
	want     bool
}

// textCases are the text files Salt itself can check (passlib, which Salt
// needs for htpasswd and htdigest, is not among the peers' packages).
var textCases = []fileCase{
	{"plain", D{"^filename": "plain.txt"}, "dean", "goneFishing", true},
	{"plain wrong", D{"^filename": "plain.txt"}, "dean", "gonefishing", false},
	{"plain unknown user", D{"^filename": "plain.txt"}, "nobody", "goneFishing", false},
	{"plain empty", D{"^filename": "plain.txt"}, "", "", false},
	{"plain second line", D{"^filename": "plain.txt"}, "gene", "OceanMan", true},
	{"plain extra field", D{"^filename": "plain.txt"}, "colon", "pa", true},
	{"plain extra field whole", D{"^filename": "plain.txt"}, "colon", "pa:ss", false},
	{"plain unicode", D{"^filename": "plain.txt"}, "ünï", "cödé", true},
	{"plain explicit type", D{"^filename": "plain.txt", "^filetype": "text", "^hashtype": "plaintext"}, "dean", "goneFishing", true},
	{"plain swapped fields", D{"^filename": "plain.txt", "^username_field": 2, "^password_field": 1}, "goneFishing", "dean", true},
	{"plain field zero is last", D{"^filename": "plain.txt", "^username_field": 0, "^password_field": 1}, "goneFishing", "dean", true},
	{"sha256", D{"^filename": "sha256.txt", "^hashtype": "sha256"}, "dean", "goneFishing", true},
	{"sha256 wrong", D{"^filename": "sha256.txt", "^hashtype": "sha256"}, "gene", "oceanman", false},
	{"sha256 second", D{"^filename": "sha256.txt", "^hashtype": "sha256"}, "gene", "OceanMan", true},
	{"sha256 the hash itself", D{"^filename": "sha256.txt", "^hashtype": "sha256"}, "dean", "7c0b3bdb0fe1d4bb5d9a4c3a4f3c2a1b", false},
	{"sha512", D{"^filename": "sha512.txt", "^hashtype": "sha512"}, "dean", "goneFishing", true},
	{"legacy md5", D{"^filename": "legacy.txt", "^hashtype": "md5", "^field_separator": "|", "^username_field": "2", "^password_field": 3}, "trey", "trey secret", true},
	{"legacy md5 second", D{"^filename": "legacy.txt", "^hashtype": "md5", "^field_separator": "|", "^username_field": 2, "^password_field": 3}, "mike", "mike secret", true},
	{"legacy md5 wrong", D{"^filename": "legacy.txt", "^hashtype": "md5", "^field_separator": "|", "^username_field": 2, "^password_field": 3}, "mike", "trey secret", false},
	{"legacy id is no user", D{"^filename": "legacy.txt", "^hashtype": "md5", "^field_separator": "|", "^username_field": 2, "^password_field": 3}, "46", "trey secret", false},
	{"short line before", D{"^filename": "broken.txt"}, "ann", "one", true},
	{"short line stops", D{"^filename": "broken.txt"}, "bob", "two", false},
	{"crlf", D{"^filename": "crlf.txt"}, "ann", "one", true},
	{"crlf stripped", D{"^filename": "crlf.txt"}, "bob", "two", true},
}

func parseFile(t *testing.T, config D) *EAuth {
	t.Helper()
	conf := D{}
	for k, v := range config {
		conf[k] = v
	}
	conf["^filename"] = testdataPath(t, config["^filename"].(string))
	for k, v := range eauthACL {
		conf[k] = v
	}
	e, err := ParseEAuth(roundTrip(t, D{"file": conf}).(map[string]any), nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFileEAuthText(t *testing.T) {
	for _, c := range textCases {
		_, ok, err := parseFile(t, c.config).Authenticate("file", c.username, c.password)
		if err != nil || ok != c.want {
			t.Errorf("%s: got %v, %v; want %v", c.name, ok, err, c.want)
		}
	}
}

// TestFileEAuthAgainstSalt runs the text cases through salt.auth.file.auth
// and netapi's perms of the /login reply. htpasswd and htdigest are not
// compared with Salt: Salt needs passlib for them, which the peers do not
// install, so those formats are held to vectors made by openssl passwd and
// glibc's crypt in TestFileEAuthHtpasswd.
func TestFileEAuthAgainstSalt(t *testing.T) {
	var cases []any
	for _, c := range textCases {
		conf := D{}
		for k, v := range c.config {
			conf[k] = v
		}
		conf["^filename"] = testdataPath(t, c.config["^filename"].(string))
		cases = append(cases, D{"kind": "file", "config": conf, "acl": eauthACL, "username": c.username, "password": c.password})
	}
	verdicts := oracle(t, D{"targets": D{}, "cases": cases})
	agree := 0
	for i, c := range textCases {
		v := verdicts[i]
		perms, ok, err := parseFile(t, c.config).Authenticate("file", c.username, c.password)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if salt := v["ok"] == true; salt != ok || salt != c.want {
			t.Errorf("%s: Salt says %v (%v), brine %v, the table %v", c.name, salt, v, ok, c.want)
			continue
		}
		if ok && !reflect.DeepEqual(roundTrip(t, perms), roundTrip(t, v["perms"])) {
			t.Errorf("%s: perms %s, Salt's %s", c.name, py.ReprValue(roundTrip(t, perms)), py.ReprValue(v["perms"]))
			continue
		}
		agree++
	}
	t.Logf("%d of %d file eauth cases agree with Salt 3006.6", agree, len(textCases))
}

func TestFileEAuthHtpasswd(t *testing.T) {
	e := parseFile(t, D{"^filename": "htpasswd", "^filetype": "htpasswd"})
	for _, c := range []struct {
		user, password string
		want           bool
		err            string
	}{
		{"apr", "apr secret", true, ""},
		{"apr", "apr secreT", false, ""},
		{"aprlong", "a very long password of more than sixteen bytes", true, ""},
		{"aprlong", "a very long password of more than sixteen byte", false, ""},
		{"aprempty", "", true, ""},
		{"md5", "md5 secret", true, ""},
		{"md5", "md5 secrets", false, ""},
		{"sha", "sha secret", true, ""},
		{"sha", "", false, ""},
		{"bc", "bcrypt secret", true, ""},
		{"bc", "bcrypt secre", false, ""},
		{"bcy", "y secret", true, ""},
		{"nobody", "x", false, ""},
		{"# brine's test users, one per scheme", "", false, ""},
		{"sha512crypt", "x", false, "SHA-crypt ($6$) is not supported by brine"},
		{"plain", "secret", false, "plaintext or unknown hash is not supported by brine"},
	} {
		perms, ok, err := e.Authenticate("file", c.user, c.password)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "htpasswd") {
				t.Errorf("%s: want an error with %q naming the file, got %v", c.user, c.err, err)
			}
			continue
		}
		if err != nil || ok != c.want {
			t.Errorf("%s %q: got %v, %v; want %v", c.user, c.password, ok, err, c.want)
		}
		if c.user == "apr" && ok && !reflect.DeepEqual(perms, []any{"grains.items", "test.*"}) {
			t.Errorf("apr's perms: %s", py.ReprValue(perms))
		}
	}
}

func TestFileEAuthHtdigest(t *testing.T) {
	e := parseFile(t, D{"^filename": "htdigest", "^filetype": "htdigest", "^realm": "brine realm"})
	for _, c := range []struct {
		user, password string
		want           bool
	}{
		{"dora", "digest secret", true},
		{"dora", "digest secreT", false},
		{"dorа", "digest secret", false}, // a Cyrillic a
	} {
		if _, ok, err := e.Authenticate("file", c.user, c.password); err != nil || ok != c.want {
			t.Errorf("%s %q: got %v, %v; want %v", c.user, c.password, ok, err, c.want)
		}
	}
	// The same line under another realm: md5 of another string.
	e = parseFile(t, D{"^filename": "htdigest", "^filetype": "htdigest", "^realm": "other realm"})
	if _, ok, err := e.Authenticate("file", "dora", "digest secret"); ok || err != nil {
		t.Errorf("other realm: got %v, %v", ok, err)
	}
}

func TestMD5CryptVectors(t *testing.T) {
	// From openssl passwd -apr1 / -1.
	for _, c := range []struct{ password, hash, magic string }{
		{"apr secret", "$apr1$Xy7zQ1ab$nvqUjXjQggDIL.2FgkkXD.", "$apr1$"},
		{"", "$apr1$ab$S8K6Sgp3W8c9Jb6LxgywZ.", "$apr1$"},
		{"md5 secret", "$1$saltsalt$8Vm.2xxXPWiXMc3Fvay73.", "$1$"},
	} {
		if got := md5Crypt(c.password, c.hash, c.magic); got != c.hash {
			t.Errorf("md5Crypt(%q) = %s, want %s", c.password, got, c.hash)
		}
	}
}

func TestFileEAuthRereads(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "users")
	if err := os.WriteFile(name, []byte("dean:one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := ParseEAuth(map[string]any{"file": map[string]any{"^filename": name, "dean": []any{"test.*"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.Authenticate("file", "dean", "one"); !ok || err != nil {
		t.Fatalf("first: %v, %v", ok, err)
	}
	if err := os.WriteFile(name, []byte("dean:two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.Authenticate("file", "dean", "one"); ok {
		t.Error("the old password still logs in after the file changed")
	}
	if perms, ok, err := e.Authenticate("file", "dean", "two"); !ok || err != nil || !reflect.DeepEqual(perms, []any{"test.*"}) {
		t.Errorf("new password: %v, %v, %v", perms, ok, err)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.Authenticate("file", "dean", "two"); ok || err == nil || !strings.Contains(err.Error(), name) {
		t.Errorf("missing file: want an error naming it, got %v, %v", ok, err)
	}
	if _, ok, err := e.Authenticate("pam", "dean", "two"); ok || err != nil {
		t.Errorf("an eauth not configured: got %v, %v", ok, err)
	}
}

func TestParseEAuthErrors(t *testing.T) {
	where := func(key string) string { return "master.yml:12" }
	for _, c := range []struct {
		name string
		conf map[string]any
		want string
	}{
		{"pam", D{"pam": D{"dean": L{".*"}}}, "master.yml:12: external_auth:pam: the pam eauth is not supported by brine (PAM needs cgo"},
		{"ldap", D{"ldap": D{"dean": L{".*"}}}, "external_auth:ldap: the ldap eauth is not supported by brine"},
		{"no filename", D{"file": D{"dean": L{".*"}}}, "external_auth:file:^filename: is required"},
		{"sha1", D{"file": D{"^filename": "/x", "^hashtype": "sha1"}}, `external_auth:file:^hashtype: "sha1" is not a hash`},
		{"filetype", D{"file": D{"^filename": "/x", "^filetype": "Text"}}, `external_auth:file:^filetype: "Text" is not a file type`},
		{"realm", D{"file": D{"^filename": "/x", "^filetype": "htdigest"}}, "external_auth:file:^realm: is required"},
		{"field", D{"file": D{"^filename": "/x", "^username_field": "one"}}, "external_auth:file:^username_field: must be a field number"},
		{"option", D{"file": D{"^filename": "/x", "^hash": "md5"}}, "external_auth:file:^hash: not an option"},
		{"user not a list", D{"file": D{"^filename": "/x", "dean": ".*"}}, "external_auth:file:dean: a permission list is needed"},
		{"separator", D{"file": D{"^filename": "/x", "^field_separator": ""}}, "external_auth:file:^field_separator: must not be empty"},
		{"not a mapping", D{"file": L{}}, "external_auth:file: must be a mapping"},
	} {
		_, err := ParseEAuth(c.conf, where)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	e, err := ParseEAuth(map[string]any{"file": map[any]any{"^filename": "/x", "dean": []any{map[any]any{"web*": []any{"test.*"}}}}}, where)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.AuthList("file", "dean"); !reflect.DeepEqual(got, []any{map[string]any{"web*": []any{"test.*"}}}) {
		t.Errorf("a YAML map[any]any is read as a dict: %#v", got)
	}
}

func TestSortedPermissions(t *testing.T) {
	got := sortedPermissions([]any{"test.*", D{"web*": L{"b"}}, "@runner", "test.*", D{"db*": L{"a"}}, D{"web*": L{"b"}}})
	want := []any{"@runner", "test.*", D{"db*": L{"a"}}, D{"web*": L{"b"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s, want %s", py.ReprValue(got), py.ReprValue(want))
	}
}
