//go:build linux

package pkg

import (
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// owner, file_list and file_dict on this machine, against dpkg's own
// package (its files are there on every Debian).
func TestPackageFilesHere(t *testing.T) {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Fatalf("TestPackageFilesHere needs Debian's dpkg-query: %v", err)
	}
	c := caller(t, registry(t, &Manager{}))
	if got, err := c("pkg.owner", "/usr/bin/dpkg"); err != nil || got != "dpkg" {
		t.Errorf("owner /usr/bin/dpkg = %v, %v; want dpkg", got, err)
	}
	got, err := c("pkg.owner", "/usr/bin/dpkg", "/etc/debian_version", "/nonexistent/brine")
	want := map[string]any{"/usr/bin/dpkg": "dpkg", "/etc/debian_version": "base-files", "/nonexistent/brine": ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("owner of three = %v, %v; want %v", got, err, want)
	}
	list, err := c("pkg.file_list", "dpkg", "base-files")
	files, _ := list.(map[string]any)["files"].([]any)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.(string))
	}
	if err != nil || !slices.Contains(paths, "/usr/bin/dpkg") || !slices.Contains(paths, "/etc/debian_version") || !slices.IsSorted(paths) ||
		len(slices.Compact(slices.Clone(paths))) != len(paths) {
		t.Errorf("file_list dpkg base-files: %d files, %v", len(paths), err)
	}
	dict, err := c("pkg.file_dict", "dpkg")
	pk, _ := dict.(map[string]any)["packages"].(map[string]any)
	if err != nil || len(pk) != 1 || !slices.Contains(pk["dpkg"].([]any), any("/usr/bin/dpkg")) {
		t.Errorf("file_dict dpkg = %d packages, %v", len(pk), err)
	}
	if _, err := c("pkg.file_list", "nosuchpkg-brine"); err == nil || !strings.HasPrefix(err.Error(), "Error:  dpkg-query: no packages found matching nosuchpkg-brine") {
		t.Errorf("file_list of an unknown package: %v", err)
	}
}
