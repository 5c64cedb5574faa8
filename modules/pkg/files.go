package pkg

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/brinehq/brine/function"
)

// fileFuncs declares pkg.owner, pkg.file_list and pkg.file_dict: which
// package a file comes from, and the files of packages, as Salt's aptpkg
// (dpkg) and yumpkg (rpm) answer.
func (m *Manager) fileFuncs() []function.Func {
	return []function.Func{
		{Name: "pkg.owner", Doc: "The package owning each path ('' when none): of one path, its package; of several, {path: package}.",
			VarArgs: true, VarKwargs: true, ReadOnly: true, Run: m.owner},
		{Name: "pkg.file_list", Doc: "The files of the packages named (installed ones; all packages' without names): {errors: [], files: [paths]}.",
			VarArgs: true, VarKwargs: true, ReadOnly: true, Run: m.fileList(false)},
		{Name: "pkg.file_dict", Doc: "The files of the packages named, by package: {errors: [], packages: {name: [paths]}}.",
			VarArgs: true, VarKwargs: true, ReadOnly: true, Run: m.fileList(true)},
	}
}

func (m *Manager) owner(ctx context.Context, in *function.Input) (any, error) {
	paths, err := names(in)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return "", nil
	}
	b, err := m.backend()
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, p := range paths {
		if strings.HasPrefix(p, "-") {
			return nil, fmt.Errorf("invalid path %q", p)
		}
		var res string
		switch b.(type) {
		case apt:
			// "zip: /usr/bin/zip", "libc6:amd64: /lib/…": the name
			// before the first colon, as Salt splits it.
			r, err := m.run(ctx, nil, "dpkg", "-S", p)
			if err != nil {
				return nil, err
			}
			res, _, _ = strings.Cut(r.Stdout, ":")
			if strings.Contains(strings.ToLower(res), "no path found") {
				res = ""
			}
		default:
			r, err := m.run(ctx, nil, "rpm", "-qf", "--queryformat", "%{name}", p)
			if err != nil {
				return nil, err
			}
			if res = r.Stdout; strings.Contains(strings.ToLower(res), "not owned") || r.Code != 0 {
				res = ""
			}
		}
		out[p] = strings.TrimSpace(res)
	}
	if len(paths) == 1 {
		return out[paths[0]], nil
	}
	return out, nil
}

// fileList is file_list (byPackage false: every file once, sorted on
// Debian as Salt's set) and file_dict.
func (m *Manager) fileList(byPackage bool) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		pkgs, err := names(in)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			if err := validName(p); err != nil {
				return nil, err
			}
		}
		b, err := m.backend()
		if err != nil {
			return nil, err
		}
		var installed []string
		errs := []any{}
		switch b.(type) {
		case apt:
			r, err := m.run(ctx, nil, append([]string{"dpkg-query", "-f=${db:Status-Status}\t${binary:Package}\n", "-W"}, pkgs...)...)
			if err != nil {
				return nil, err
			}
			if r.Code != 0 {
				// Salt returns "Error:  <stderr>" as the result.
				return nil, saltError("Error:  " + strings.TrimSpace(r.Stderr))
			}
			for line := range strings.SplitSeq(r.Stdout, "\n") {
				if status, name, ok := strings.Cut(line, "\t"); ok && status == "installed" {
					installed = append(installed, name)
				}
			}
		default:
			argv := append([]string{"rpm", "-q", "--queryformat", `%{NAME}\n`}, pkgs...)
			if len(pkgs) == 0 {
				argv = []string{"rpm", "-qa", "--queryformat", `%{NAME}\n`}
			}
			r, err := m.run(ctx, nil, argv...)
			if err != nil {
				return nil, err
			}
			for line := range strings.SplitSeq(r.Stdout+"\n"+r.Stderr, "\n") {
				switch line = strings.TrimSpace(line); {
				case line == "":
				case strings.Contains(line, "is not installed"):
					errs = append(errs, line)
				default:
					installed = append(installed, line)
				}
			}
		}
		files := map[string][]string{}
		for _, p := range installed {
			argv := []string{"dpkg", "-L", p}
			if _, isApt := b.(apt); !isApt {
				argv = []string{"rpm", "-ql", p}
			}
			r, err := m.run(ctx, nil, argv...)
			if err != nil {
				return nil, err
			}
			for line := range strings.SplitSeq(strings.TrimRight(r.Stdout, "\n"), "\n") {
				if line != "" {
					files[p] = append(files[p], line)
				}
			}
		}
		if byPackage {
			out := map[string]any{}
			for p, fs := range files {
				out[p] = listOf(fs)
			}
			return map[string]any{"errors": errs, "packages": out}, nil
		}
		var all []string
		for _, fs := range files {
			all = append(all, fs...)
		}
		slices.Sort(all)
		return map[string]any{"errors": errs, "files": listOf(slices.Compact(all))}, nil
	}
}
