// Package hosts is Salt's hosts execution module: the names of
// addresses in the hosts file (/etc/hosts, or the agent option
// hosts.file as in Salt), read and written line for line as Salt's
// module does, so that a file Salt edited and one brine edited are the
// same: adding a name rewrites the file in Salt's layout
// ("ip<TAB><TAB>names<TAB><TAB># comment", one line per address, comment
// lines kept in place, blank lines dropped), removing one edits only its
// line, and set_host replaces the address's line. The host states work
// through it.
package hosts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// File is the hosts file, read and written as Salt's hosts execution
// module does. It is rewritten in place (truncated, not replaced): in a
// container /etc/hosts is a bind mount, which a rename cannot replace.
type File struct{ Path string }

// Entry is one address of the file with its names and comment, or (key
// comment-N) one comment line, as Salt's _list_hosts keys them.
type Entry struct {
	Key     string
	Aliases []string
	Comment *string
	Line    string // a comment line's text
}

func (e *Entry) IsComment() bool { return strings.HasPrefix(e.Key, "comment-") }

func (e *Entry) HasAlias(name string) bool {
	for _, a := range e.Aliases {
		if a == name {
			return true
		}
	}
	return false
}

// Hosts is Salt's _list_hosts: an ordered mapping of addresses (and
// comment lines) to their entries.
type Hosts struct{ Entries []*Entry }

func (h *Hosts) Find(key string) *Entry {
	for _, e := range h.Entries {
		if e.Key == key {
			return e
		}
	}
	return nil
}

func (f *File) List() (*Hosts, error) {
	raw, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Hosts{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file %s: %w", f.Path, err)
	}
	h := &Hosts{}
	count := 0
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			h.Entries = append(h.Entries, &Entry{Key: fmt.Sprintf("comment-%d", count), Line: line})
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
		e := h.Find(comps[0])
		if e == nil {
			e = &Entry{Key: comps[0], Aliases: []string{}}
			h.Entries = append(h.Entries, e)
		}
		e.Aliases = append(e.Aliases, comps[1:]...)
		if comment != "" {
			c := comment
			e.Comment = &c
		}
	}
	return h, nil
}

// write is Salt's _write_hosts: the file in Salt's layout.
func (f *File) write(h *Hosts) error {
	var b strings.Builder
	for _, e := range h.Entries {
		line := e.Line
		if !e.IsComment() {
			line = e.Key + "\t\t" + strings.Join(e.Aliases, " ")
			if e.Comment != nil {
				line += "\t\t# " + *e.Comment
			}
		}
		if l := strings.TrimSpace(line); l != "" {
			b.WriteString(l + "\n")
		}
	}
	return f.save([]byte(b.String()))
}

// save writes the file in place, keeping its mode (created 0644).
func (f *File) save(data []byte) error {
	if err := os.WriteFile(f.Path, data, 0o644); err != nil {
		return fmt.Errorf("hosts file %s: %w", f.Path, err)
	}
	return nil
}

// AddHost is Salt's hosts.add_host: name added to the address's names
// (a new address at the end), and the file rewritten.
func (f *File) AddHost(ip, name string) error {
	h, err := f.List()
	if err != nil {
		return err
	}
	e := h.Find(ip)
	if e != nil && e.HasAlias(name) {
		return nil
	}
	if e == nil {
		e = &Entry{Key: ip}
		h.Entries = append(h.Entries, e)
	}
	e.Aliases = append(e.Aliases, name)
	return f.write(h)
}

// SetComment is Salt's hosts.set_comment: false when the address is not
// in the file.
func (f *File) SetComment(ip, comment string) (bool, error) {
	h, err := f.List()
	if err != nil {
		return false, err
	}
	e := h.Find(ip)
	if e == nil {
		return false, nil
	}
	if e.Comment != nil && *e.Comment == comment {
		return true, nil
	}
	e.Comment = &comment
	return true, f.write(h)
}

// rawLines are the file's lines with their endings (Python's
// readlines on bytes).
func (f *File) rawLines() ([]string, error) {
	raw, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts file %s: %w", f.Path, err)
	}
	return strings.SplitAfter(string(raw), "\n"), nil
}

// RmHost is Salt's hosts.rm_host: name taken out of the address's lines
// (a line left with no name removed), the other lines as they were.
func (f *File) RmHost(ip, name string) error {
	h, err := f.List()
	if err != nil {
		return err
	}
	if e := h.Find(ip); e == nil || !e.HasAlias(name) {
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

// SetHost is Salt's hosts.set_host: the address's first line becomes
// "ip<TAB><TAB>names" (none when names is blank), its other lines go.
func (f *File) SetHost(ip, names, comment string) error {
	add := ip + "\t\t" + names + "\n"
	if comment != "" {
		add = ip + "\t\t" + names + "\t\t# " + comment + "\n"
	}
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
