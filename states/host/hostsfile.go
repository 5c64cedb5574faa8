package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// hostsFile is the hosts file, read and written as Salt's hosts execution
// module does. It is rewritten in place (truncated, not replaced): in a
// container /etc/hosts is a bind mount, which a rename cannot replace.
type hostsFile struct{ path string }

// entry is one address of the file with its names and comment, or (key
// comment-N) one comment line, as Salt's _list_hosts keys them.
type entry struct {
	key     string
	aliases []string
	comment *string
	line    string // a comment line's text
}

func (e *entry) isComment() bool { return strings.HasPrefix(e.key, "comment-") }

func (e *entry) hasAlias(name string) bool {
	for _, a := range e.aliases {
		if a == name {
			return true
		}
	}
	return false
}

// hosts is Salt's _list_hosts: an ordered mapping of addresses (and
// comment lines) to their entries.
type hosts struct{ entries []*entry }

func (h *hosts) find(key string) *entry {
	for _, e := range h.entries {
		if e.key == key {
			return e
		}
	}
	return nil
}

func (f *hostsFile) list() (*hosts, error) {
	raw, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &hosts{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file %s: %w", f.path, err)
	}
	h := &hosts{}
	count := 0
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			h.entries = append(h.entries, &entry{key: fmt.Sprintf("comment-%d", count), line: line})
			count++
			continue
		}
		var comment string
		if i := strings.Index(line, "#"); i >= 0 {
			comment = strings.TrimLeft(line[i+1:], " \t\n\r\v\f")
			line = strings.TrimSpace(line[:i])
		}
		comps := strings.Fields(line)
		if len(comps) == 0 {
			continue
		}
		e := h.find(comps[0])
		if e == nil {
			e = &entry{key: comps[0], aliases: []string{}}
			h.entries = append(h.entries, e)
		}
		e.aliases = append(e.aliases, comps[1:]...)
		if comment != "" {
			c := comment
			e.comment = &c
		}
	}
	return h, nil
}

// write is Salt's _write_hosts: the file in Salt's layout.
func (f *hostsFile) write(h *hosts) error {
	var b strings.Builder
	for _, e := range h.entries {
		line := e.line
		if !e.isComment() {
			line = e.key + "\t\t" + strings.Join(e.aliases, " ")
			if e.comment != nil {
				line += "\t\t# " + *e.comment
			}
		}
		if l := strings.TrimSpace(line); l != "" {
			b.WriteString(l + "\n")
		}
	}
	return f.save([]byte(b.String()))
}

// save writes the file in place, keeping its mode (created 0644).
func (f *hostsFile) save(data []byte) error {
	if err := os.WriteFile(f.path, data, 0o644); err != nil {
		return fmt.Errorf("hosts file %s: %w", f.path, err)
	}
	return nil
}

// addHost is Salt's hosts.add_host: name added to the address's names
// (a new address at the end), and the file rewritten.
func (f *hostsFile) addHost(ip, name string) error {
	h, err := f.list()
	if err != nil {
		return err
	}
	e := h.find(ip)
	if e != nil && e.hasAlias(name) {
		return nil
	}
	if e == nil {
		e = &entry{key: ip}
		h.entries = append(h.entries, e)
	}
	e.aliases = append(e.aliases, name)
	return f.write(h)
}

// setComment is Salt's hosts.set_comment: false when the address is not
// in the file.
func (f *hostsFile) setComment(ip, comment string) (bool, error) {
	h, err := f.list()
	if err != nil {
		return false, err
	}
	e := h.find(ip)
	if e == nil {
		return false, nil
	}
	if e.comment != nil && *e.comment == comment {
		return true, nil
	}
	e.comment = &comment
	return true, f.write(h)
}

// rawLines are the file's lines with their endings (Python's
// readlines on bytes).
func (f *hostsFile) rawLines() ([]string, error) {
	raw, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file %s: %w", f.path, err)
	}
	return strings.SplitAfter(string(raw), "\n"), nil
}

// rmHost is Salt's hosts.rm_host: name taken out of the address's lines
// (a line left with no name removed), the other lines as they were.
func (f *hostsFile) rmHost(ip, name string) error {
	h, err := f.list()
	if err != nil {
		return err
	}
	if e := h.find(ip); e == nil || !e.hasAlias(name) {
		return nil
	}
	lines, err := f.rawLines()
	if err != nil {
		return err
	}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		info, comment, _ := strings.Cut(t, "#")
		comment = strings.TrimLeft(comment, " \t\n\r\v\f")
		comps := strings.Fields(info)
		if len(comps) == 0 || comps[0] != ip {
			continue
		}
		nl := comps[0] + "\t\t"
		for _, a := range comps[1:] {
			if a != name {
				nl += a + " "
			}
		}
		switch {
		case strings.TrimSpace(nl) == ip:
			lines[i] = ""
		case comment != "":
			lines[i] = nl + "# " + comment + "\n"
		default:
			lines[i] = nl + "\n"
		}
	}
	return f.save([]byte(strings.Join(lines, "")))
}

// setHost is Salt's hosts.set_host: the address's first line becomes
// "ip<TAB><TAB>names" (none when names is blank), its other lines go.
func (f *hostsFile) setHost(ip, names string) error {
	add := ip + "\t\t" + names + "\n"
	if strings.TrimSpace(names) == "" {
		add = ""
	}
	lines, err := f.rawLines()
	if err != nil {
		return err
	}
	done := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.Fields(t)[0] == ip {
			if !done {
				lines[i], done = add, true
			} else {
				lines[i] = ""
			}
		}
	}
	if !done {
		if n := len(lines); n > 0 && lines[n-1] != "" && !strings.HasSuffix(lines[n-1], "\n") {
			lines[n-1] += "\n"
		}
		lines = append(lines, add)
	}
	return f.save([]byte(strings.Join(lines, "")))
}
