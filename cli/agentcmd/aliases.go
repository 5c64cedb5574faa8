package agentcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// NewInstallAliasesCmd is `NAME install-aliases [DIR]`: links named after
// Salt's commands (names' keys) to this binary, which Main then runs as the
// subcommand each maps to.
func NewInstallAliasesCmd(names map[string]string) *cobra.Command {
	var (
		force  bool
		asJSON bool
	)
	var list []string
	for _, name := range slices.Sorted(maps.Keys(names)) {
		sub := names[name]
		if sub == "" {
			list = append(list, name+" runs the agent itself")
		} else {
			list = append(list, name+" runs the "+sub+" command")
		}
	}
	cmd := &cobra.Command{
		Use:   "install-aliases [DIR]",
		Short: "Link Salt's command names (" + strings.Join(slices.Sorted(maps.Keys(names)), ", ") + ") to this binary",
		Long: `Create symbolic links named after Salt's commands in DIR (default: the
directory of this binary), each pointing to this binary. Run under one of
those names, it behaves as that command, taking that command's flags: ` +
			strings.Join(list, "; ") + `. A link that exists and points to this binary is left
alone; any other file of that name is left alone and reported, unless --force.`,
		Example: `  sudo brine install-aliases /usr/local/bin
  salt '*' test.ping`,
		Args: RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if self, err = filepath.EvalSymlinks(self); err != nil {
				return err
			}
			dir := filepath.Dir(self)
			if len(args) == 1 {
				dir = args[0]
			}
			made, kept := []string{}, []string{}
			var errs []error
			for _, name := range slices.Sorted(maps.Keys(names)) {
				link := filepath.Join(dir, name)
				if target, err := filepath.EvalSymlinks(link); err == nil {
					if target == self {
						kept = append(kept, link)
						continue
					}
					if !force {
						errs = append(errs, fmt.Errorf("%s exists and is not this binary (%s); --force replaces it", link, target))
						continue
					}
					if err := os.Remove(link); err != nil {
						errs = append(errs, err)
						continue
					}
				} else if _, lerr := os.Lstat(link); lerr == nil {
					// A dangling link: replace it.
					if err := os.Remove(link); err != nil {
						errs = append(errs, err)
						continue
					}
				}
				if err := os.Symlink(self, link); err != nil {
					errs = append(errs, err)
					continue
				}
				made = append(made, link)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.Marshal(map[string]any{"created": made, "kept": kept, "target": self})
				fmt.Fprintf(out, "%s\n", b)
			} else {
				for _, l := range made {
					fmt.Fprintf(out, "created %s -> %s\n", l, self)
				}
				for _, l := range kept {
					fmt.Fprintf(out, "kept    %s\n", l)
				}
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace files of those names that are not links to this binary")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"created": [...], "kept": [...], "target": PATH}`)
	return cmd
}
