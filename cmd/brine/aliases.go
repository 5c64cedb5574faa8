package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
)

func newInstallAliasesCmd() *cobra.Command {
	var (
		force  bool
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "install-aliases [DIR]",
		Short: "Link Salt's command names (salt, salt-call, salt-key, salt-run, salt-cloud, …) to this binary",
		Long: `Create symbolic links named after Salt's commands in DIR (default: the
directory of this binary), each pointing to brine. Run under one of those
names, brine behaves as that command: salt is brine exec, salt-call is brine
call, salt-key brine key, salt-run brine run, salt-cloud brine cloud,
salt-master brine master and salt-minion brine agent, each taking that
command's flags. A link that exists and points to brine is left alone; any
other file of that name is left alone and reported, unless --force.`,
		Example: `  sudo brine install-aliases /usr/local/bin
  salt '*' test.ping`,
		Args: rangeArgs(0, 1),
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
			for _, name := range slices.Sorted(maps.Keys(saltNames)) {
				link := filepath.Join(dir, name)
				if target, err := filepath.EvalSymlinks(link); err == nil {
					if target == self {
						kept = append(kept, link)
						continue
					}
					if !force {
						errs = append(errs, fmt.Errorf("%s exists and is not brine (%s); --force replaces it", link, target))
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
	cmd.Flags().BoolVar(&force, "force", false, "replace files of those names that are not links to brine")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"created": [...], "kept": [...], "target": PATH}`)
	return cmd
}
