package file

import "testing"

// TestExtractHash holds what Salt 3006.6's file.extract_hash returned
// (hash type "", any) for each file of hashes, file name, source and
// source_hash_name.
func TestExtractHash(t *testing.T) {
	for _, c := range []struct {
		name, text, fileName, source, hashName string
		kind, hsum                             string
		ok                                     bool
	}{
		{"sha256sum output, by source", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe  app.tar.gz\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e  app.zip\n", "", "https://x.example/dl/app.zip", "", "sha256", "73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e", true},
		{"sha256sum binary mode", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe *app.tar.gz\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e *app.zip\n", "", "/srv/app.tar.gz", "", "sha256", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", true},
		{"source_hash_name wins", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe  app.tar.gz\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e  other\n", "", "/srv/app.tar.gz", "other", "sha256", "73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e", true},
		{"name first, hash after", "app.tar.gz 24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe\n", "", "", "app.tar.gz", "sha256", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", true},
		{"no name match: the first hash", "d41d8cd98f00b204e9800998ecf8427e  a\n24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe  b\n", "", "/srv/c", "", "md5", "d41d8cd98f00b204e9800998ecf8427e", true},
		{"BSD style", "SHA256 (app.tar.gz) = 24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe\n", "", "/srv/app.tar.gz", "", "sha256", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", true},
		{"uppercase hash", "24F473296BAB4B90191F7DEA1C4F4611DF697A171C532AA663998A75C765F7FE  app.tar.gz\n", "", "/srv/app.tar.gz", "", "sha256", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", true},
		{"a hash of an odd length skips the line", "abcdef0123456789abcdef0123456789ab  x\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e  y\n", "", "/srv/z", "", "sha256", "73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e", true},
		{"nothing", "no hashes here\n", "", "/srv/z", "", "", "", false},
		{"file_name", "24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe  /etc/app.conf\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e  /etc/other\n", "/etc/other", "", "", "sha256", "73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e", true},
		{"longer alnum run is not a hash", "x24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe  app\n73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e  app\n", "", "/srv/app", "", "sha256", "73d33b03833a754cc76d8d6d88c3f06f2f48238333ca749d7f5f7594e5acb26e", true},
	} {
		got, ok := ExtractHash(c.text, c.fileName, c.source, c.hashName)
		if ok != c.ok || ok && (got.HashType != c.kind || got.Hsum != c.hsum) {
			t.Errorf("%s: got %+v %v, want %s %s %v", c.name, got, ok, c.kind, c.hsum, c.ok)
		}
	}
}

// TestParseSourceHash holds Salt 3006.6's get_source_sum answers for
// hashes given inline (salt-call --local, archive.extracted).
func TestParseSourceHash(t *testing.T) {
	for _, c := range []struct{ in, kind, hsum, err string }{
		{"sha256=24F473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", "sha256",
			"24f473296bab4b90191f7dea1c4f4611df697a171c532aa663998a75c765f7fe", ""},
		{"d41d8cd98f00b204e9800998ecf8427e", "md5", "d41d8cd98f00b204e9800998ecf8427e", ""},
		{"sha999=abc", "", "", "Invalid hash type 'sha999'. Supported hash types are: sha512, sha384, sha256, sha224, sha1, " +
			"md5. Either remove the hash type and simply use 'abc' as the source_hash, or change the hash type to a supported type."},
		{"sha256=24f473296bab4b90191f7dea1c4f4611", "", "", "Invalid length (32) for hash type 'sha256'. Either remove the " +
			"hash type and simply use '24f473296bab4b90191f7dea1c4f4611' as the source_hash, or change the hash type to 'md5'"},
	} {
		got, err := ParseSourceHash(c.in)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != c.err || got.HashType != c.kind || got.Hsum != c.hsum {
			t.Errorf("%s: got %+v %q, want %s %s %q", c.in, got, msg, c.kind, c.hsum, c.err)
		}
	}
	if _, err := ParseSourceHash("xyz"); err == nil || err.Error()[:30] != "Source hash xyz format is inva" {
		t.Errorf("xyz: %v", err)
	}
}
