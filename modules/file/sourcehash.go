package file

import (
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"unicode"
)

// Hash lengths by type, as Salt's HASHES.
var hashLens = map[string]int{"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}

// hashTypeOf is Salt's HASHES_REVMAP: the type of a hash of that length.
func hashTypeOf(n int) string {
	for t, l := range hashLens {
		if l == n {
			return t
		}
	}
	return ""
}

// SourceSum is a hash a file must have: its type (sha256…) and hex digest.
type SourceSum struct{ HashType, Hsum string }

// invalidSourceHash is Salt's error for a source_hash it cannot read.
func invalidSourceHash(sourceHash string) error {
	var lens []int
	for _, l := range hashLens {
		lens = append(lens, l)
	}
	sort.Ints(lens)
	var kinds []string
	for _, l := range lens {
		kinds = append(kinds, fmt.Sprintf("%s (%d)", hashTypeOf(l), l))
	}
	return editErrorf("Source hash %s format is invalid. The supported formats are: 1) a hash, 2) an expression in the "+
		"format <hash_type>=<hash>, or 3) either a path to a local file containing hashes, or a URI of a remote hash file. "+
		"Supported protocols for remote hash files are: salt, file, http, https, ftp, swift, s3. The hash may also not be "+
		"of a valid length, the following are supported hash types and lengths: %s.", sourceHash, strings.Join(kinds, ", "))
}

// IsHashFile is whether source_hash names a file of hashes (an absolute
// path or a URL) rather than giving the hash.
func IsHashFile(sourceHash string) bool {
	if path.IsAbs(sourceHash) {
		return true
	}
	u, err := url.Parse(sourceHash)
	return err == nil && u.Scheme != ""
}

// ParseSourceHash is Salt's get_source_sum for a hash given inline:
// "<type>=<hex>", or bare hex whose length names its type.
func ParseSourceHash(sourceHash string) (SourceSum, error) {
	kind, hsum, ok := strings.Cut(sourceHash, "=")
	if !ok {
		for _, c := range sourceHash {
			if !unicode.Is(unicode.ASCII_Hex_Digit, c) {
				return SourceSum{}, invalidSourceHash(sourceHash)
			}
		}
		if kind = hashTypeOf(len(sourceHash)); kind == "" {
			return SourceSum{}, invalidSourceHash(sourceHash)
		}
		return SourceSum{kind, strings.ToLower(sourceHash)}, nil
	}
	kind, hsum = strings.TrimSpace(kind), strings.TrimSpace(hsum)
	want, known := hashLens[kind]
	switch {
	case !known:
		// Salt lists HASHES in its own order.
		return SourceSum{}, editErrorf("Invalid hash type '%s'. Supported hash types are: sha512, sha384, sha256, sha224, "+
			"sha1, md5. Either remove the hash type and simply use '%s' as the source_hash, or change the hash type to a "+
			"supported type.", kind, hsum)
	case hashTypeOf(len(hsum)) == "":
		return SourceSum{}, invalidSourceHash(sourceHash)
	case len(hsum) != want:
		return SourceSum{}, editErrorf("Invalid length (%d) for hash type '%s'. Either remove the hash type and simply use "+
			"'%s' as the source_hash, or change the hash type to '%s'", len(hsum), kind, hsum, hashTypeOf(len(hsum)))
	}
	return SourceSum{kind, strings.ToLower(hsum)}, nil
}

// firstHash is the first hash on a line as Salt's extract_hash finds it:
// the first run of letters and digits that is hex of 32 to 128
// characters; ok only when its length is that of a known hash type.
func firstHash(line string) (SourceSum, bool) {
	isAlnum := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isHex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	for i := 0; i < len(line); {
		if !isAlnum(line[i]) {
			i++
			continue
		}
		j, hex := i, true
		for j < len(line) && isAlnum(line[j]) {
			hex = hex && isHex(line[j])
			j++
		}
		if hex && j-i >= 32 && j-i <= 128 {
			kind := hashTypeOf(j - i)
			return SourceSum{kind, line[i:j]}, kind != ""
		}
		i = j
	}
	return SourceSum{}, false
}

// endsWithName is Salt's test of a line against a file name: the line
// ends with the name preceded by a separator, or starts with the name
// followed by whitespace.
func endsWithName(line, name, base, separators string) bool {
	if strings.HasSuffix(line, base) {
		return len(line) > len(base) && strings.ContainsRune(separators, rune(line[len(line)-len(base)-1]))
	}
	return strings.HasPrefix(line, name) && len(line) > len(name) && unicode.IsSpace(rune(line[len(name)]))
}

// ExtractHash is Salt's file.extract_hash with any hash type: the hash
// of a file of hashes (sha256sum's output and the like) for the line
// naming source_hash_name, else file_name, else source (by its base
// name), else the first hash of the file.
func ExtractHash(text, fileName, source, sourceHashName string) (SourceSum, bool) {
	const separators = " \t\n\r\v\f\\/*"
	var partial *SourceSum
	found := map[string][]SourceSum{}
	srcBase := ""
	if source != "" {
		p := source
		if u, err := url.Parse(source); err == nil {
			p = u.Path
			if p == "" {
				p = u.Host
			}
		}
		srcBase = path.Base(p)
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		m, ok := firstHash(line)
		if !ok {
			continue
		}
		if partial == nil {
			partial = &m
		}
		if sourceHashName != "" && (strings.HasSuffix(line, sourceHashName) &&
			len(line) > len(sourceHashName) && unicode.IsSpace(rune(line[len(line)-len(sourceHashName)-1])) ||
			!strings.HasSuffix(line, sourceHashName) && strings.HasPrefix(line, sourceHashName) &&
				len(line) > len(sourceHashName) && unicode.IsSpace(rune(line[len(sourceHashName)]))) {
			found["source_hash_name"] = append(found["source_hash_name"], m)
		}
		if fileName != "" && endsWithName(line, fileName, path.Base(fileName), separators) {
			found["file_name"] = append(found["file_name"], m)
		}
		if source != "" && endsWithName(line, source, srcBase, separators) {
			found["source"] = append(found["source"], m)
		}
	}
	for _, kind := range []string{"source_hash_name", "file_name", "source"} {
		if l := found[kind]; len(l) > 0 {
			return SourceSum{l[0].HashType, strings.ToLower(l[0].Hsum)}, true
		}
	}
	if partial != nil {
		return SourceSum{partial.HashType, strings.ToLower(partial.Hsum)}, true
	}
	return SourceSum{}, false
}

// SourceSumOf is Salt's file.get_source_sum: the hash source_hash gives
// for source, inline or read from a file of hashes that fetch returns
// the text of ("" and no error when it does not exist).
func SourceSumOf(sourceHash, fileName, source, sourceHashName string, fetch func(string) (string, bool, error)) (SourceSum, error) {
	if !IsHashFile(sourceHash) {
		return ParseSourceHash(sourceHash)
	}
	if u, err := url.Parse(sourceHash); err == nil && u.Scheme != "" && !validProto[u.Scheme] {
		return SourceSum{}, invalidSourceHash(sourceHash)
	}
	text, ok, err := fetch(sourceHash)
	if err != nil {
		return SourceSum{}, err
	}
	if !ok {
		return SourceSum{}, editErrorf("Source hash file %s not found", sourceHash)
	}
	sum, found := ExtractHash(text, fileName, source, sourceHashName)
	if !found {
		return SourceSum{}, invalidSourceHash(sourceHash)
	}
	return sum, nil
}

// validProto is Salt's files.VALID_PROTOS.
var validProto = map[string]bool{"salt": true, "file": true, "http": true, "https": true, "ftp": true, "swift": true, "s3": true}
