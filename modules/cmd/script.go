package cmd

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
)

// script returns cmd.script's handler, or script_retcode's.
func (r runner) script(retcodeOnly bool) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		o, err := r.options(in, false)
		if err != nil {
			return nil, err
		}
		args, err := scriptArgs(in.Value("args"))
		if err != nil {
			return nil, fmt.Errorf("%s: args: %w", o.fun, err)
		}
		if len(args) > 0 {
			// Arguments are passed to the script, not to a shell line.
			o.pythonShell = false
		}
		saltenv := in.String("saltenv")
		if saltenv == "" {
			saltenv, _ = opt(r.env, "saltenv").(string)
		}
		if saltenv == "" {
			saltenv = "base"
		}
		source := in.String("source")
		src, err := r.fetch(ctx, source, saltenv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.fun, err)
		}
		c, err := r.prepare(o)
		if err != nil {
			return nil, err
		}
		path, cleanup, err := r.stage(c, src, filepath.Ext(strings.SplitN(source, "?", 2)[0]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.fun, err)
		}
		c.cleanup = cleanup
		o.cmd = append([]any{path}, args...)
		if err := c.setArgv(o); err != nil {
			c.done()
			return nil, err
		}
		out, err := r.runCommand(ctx, o, c)
		if err != nil {
			return nil, err
		}
		if retcodeOnly {
			return out.retcode, nil
		}
		return out.shown(o).dict(), nil
	}
}

// scriptArgs reads a script's args: a string split shlex-style, or a list.
func scriptArgs(v any) ([]any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]any, len(t))
		for i, a := range t {
			out[i] = py.Str(a)
		}
		return out, nil
	}
	words, err := Split(py.Str(v))
	if err != nil {
		return nil, err
	}
	out := make([]any, len(words))
	for i, w := range words {
		out[i] = w
	}
	return out, nil
}

// fetch returns the local path of a script's source: a salt:// URL is
// cached from the master's file server (its saltenv from a ?saltenv=
// query, else saltenv); a local absolute path is used as it is.
func (r runner) fetch(ctx context.Context, source, saltenv string) (string, error) {
	if rest, ok := strings.CutPrefix(source, "salt://"); ok {
		path, query, _ := strings.Cut(rest, "?")
		if q, err := url.ParseQuery(query); err == nil && q.Get("saltenv") != "" {
			saltenv = q.Get("saltenv")
		}
		if r.env.Files == nil {
			return "", fmt.Errorf("%s: salt:// needs a master (this agent runs without one)", source)
		}
		local, err := r.env.Files.Cache(ctx, path, saltenv)
		if err != nil {
			return "", fmt.Errorf("unable to cache %s: %w", source, err)
		}
		return local, nil
	}
	if !filepath.IsAbs(source) {
		return "", fmt.Errorf("source %q: want a salt:// URL or an absolute local path", source)
	}
	fi, err := os.Stat(source)
	if err != nil {
		return "", fmt.Errorf("unable to cache %s: %w", source, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("unable to cache %s: not a regular file", source)
	}
	return source, nil
}

// stage copies the script at src into a private directory made for this
// run, and returns its path and what removes the directory. The directory
// is under the agent's cache; a script run as another user goes to the
// system's temporary directory instead, in a directory owned by that user,
// since the agent's cache is private to the agent.
func (r runner) stage(c *command, src, ext string) (string, func(), error) {
	base := os.TempDir()
	if c.cred == nil && r.env.CacheDir != "" {
		base = filepath.Join(r.env.CacheDir, "scripts")
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", nil, fmt.Errorf("script directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(base, "script-")
	if err != nil {
		return "", nil, fmt.Errorf("script directory: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	path := filepath.Join(dir, "script"+ext)
	if err := copyFile(path, src); err != nil {
		cleanup()
		return "", nil, err
	}
	// Salt's 0500: the owner reads and runs the script, nobody changes it.
	if err := os.Chmod(path, 0o500); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("script: %w", err)
	}
	if err := chownScript(c, dir, path); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("script: %w", err)
	}
	return path, cleanup, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("script: copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	return nil
}
