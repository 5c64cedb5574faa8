package grains

import (
	"crypto/sha256"
	"math/big"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"
)

// SaltVersion is the Salt release whose behaviour brine follows, which
// the saltversion and saltversioninfo grains report: formulas compare
// them (grains['saltversioninfo'] >= [3004]) to pick the syntax the
// minion understands, and brine understands 3006.6's. brine's own version
// is test.version's and `brine version`'s.
const SaltVersion = "3006.6"

// SaltVersionInfo is SaltVersion as Salt's saltversioninfo list.
var SaltVersionInfo = []any{3006, 6}

// process sets the grains about the agent's process and its environment:
// cwd, path, systempath, shell, pid, uid, gid, username, groupname.
func process(g map[string]any) {
	if wd, err := os.Getwd(); err == nil {
		g["cwd"] = wd
	}
	path := strings.TrimSpace(os.Getenv("PATH"))
	g["path"] = path
	sys := []any{}
	for _, p := range strings.Split(path, string(os.PathListSeparator)) {
		sys = append(sys, p)
	}
	g["systempath"] = sys
	if sh := os.Getenv("SHELL"); sh != "" {
		g["shell"] = sh
	} else {
		g["shell"] = "/bin/sh"
	}
	g["pid"] = os.Getpid()
	g["uid"], g["gid"] = os.Geteuid(), os.Getegid()
	if u, err := user.LookupId(strconv.Itoa(os.Geteuid())); err == nil {
		g["username"] = u.Username
		g["groupname"] = ""
		if grp, err := user.LookupGroupId(u.Gid); err == nil {
			g["groupname"] = grp.Name
		}
	}
}

// serverID is Salt's server_id grain: a number from the agent's id,
// sha256 taken modulo 2³¹, stable across restarts (MySQL's server-id).
func serverID(id string) int {
	sum := sha256.Sum256([]byte(id))
	n := new(big.Int).SetBytes(sum[:])
	return int(n.Mod(n, big.NewInt(1<<31)).Int64())
}

// localeInfo is Salt's locale_info grain. Python's locale.getlocale()
// reads the locale of LC_ALL, LC_CTYPE or LANG, and maps the C and POSIX
// locales (which Python coerces to C.UTF-8) to en_US UTF-8; timezone is
// the local zone's abbreviation.
func localeInfo() map[string]any {
	lang, enc := "en_US", "UTF-8"
	name := ""
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := os.Getenv(k); v != "" {
			name = v
			break
		}
	}
	name, _, _ = strings.Cut(name, "@")
	l, e, hasEnc := strings.Cut(name, ".")
	switch l {
	case "", "C", "POSIX":
	default:
		lang = l
		enc = ""
		if hasEnc {
			enc = normEncoding(e)
		}
	}
	zone, _ := time.Now().Zone()
	return map[string]any{"defaultlanguage": lang, "defaultencoding": enc, "detectedencoding": "utf-8", "timezone": zone}
}

// normEncoding writes an encoding name as Python's locale module does.
func normEncoding(e string) string {
	switch strings.ToLower(strings.ReplaceAll(e, "-", "")) {
	case "utf8":
		return "UTF-8"
	case "iso88591":
		return "ISO8859-1"
	case "iso885915":
		return "ISO8859-15"
	}
	return e
}
