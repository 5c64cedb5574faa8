package agentcmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are stamped at build time (the Makefile's build and
// cross targets):
//
//	-ldflags "-X github.com/brinehq/brine/cli/agentcmd.version=$(git describe --tags --always --dirty)
//	          -X github.com/brinehq/brine/cli/agentcmd.commit=$(git rev-parse HEAD)"
//
// Unstamped (go run, go test, a plain go build), they come from the build
// information Go records.
var (
	version = ""
	commit  = ""
)

// Version is brine's release: the stamped `git describe`, else the
// module's version or the VCS revision Go recorded, else "devel". The
// agent reports it as test.version, in its hello to the master and as
// the brineversion grain.
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		v := info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v = s.Value[:12]
			}
		}
		if v != "" {
			return v
		}
	}
	return "devel"
}

// Commit is the commit brine was built from: the stamped one, else the
// VCS revision Go recorded (with "-dirty" for a modified tree), else
// "unknown".
func Commit() string {
	if commit != "" {
		return commit
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" && dirty {
			return rev + "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}

// versionDetail is the release and what it was built from, as `version`
// and `--version` print it after "NAME version ".
func versionDetail() string {
	return fmt.Sprintf("%s (commit %s, %s, %s/%s)", Version(), Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// SetVersion gives root a --version flag printing what `version` prints:
// cobra's own "NAME version VERSION" line, VERSION being the detail. Not a
// version template: a template links text/template, whose method lookup
// by name keeps every exported method of every type in the binary
// (megabytes of SDK clients) out of the linker's dead code elimination.
func SetVersion(root *cobra.Command) {
	root.Version = versionDetail()
}

// NewVersionCmd is `NAME version [--json]`.
func NewVersionCmd(name string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print " + name + "'s version and commit",
		Args:  RangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]string{"version": Version(), "commit": Commit(),
					"go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			_, err := fmt.Fprintf(out, "%s version %s\n", name, versionDetail())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"version", "commit", "go", "platform"} as JSON`)
	return cmd
}
