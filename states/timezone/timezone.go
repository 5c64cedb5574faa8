// Package timezone is Salt's timezone state module: timezone.system sets
// the system's time zone and whether the hardware clock keeps UTC, with
// Salt's comments and changes.
//
// The zone is set as Salt's timezone module sets it on Debian:
// /etc/localtime becomes a symbolic link to the zone's file under
// /usr/share/zoneinfo and /etc/timezone names it; a zone is set when
// /etc/localtime's contents are not the zone file's. The hardware clock
// is read from and written to /etc/adjtime's third line (UTC or LOCAL),
// which is what timedatectl set-local-rtc, which Salt runs, changes.
package timezone

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/atomicfile"
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/state"
)

// paths are the files the state reads and writes.
type paths struct {
	localtime, timezone, adjtime, zoneinfo string
}

type states struct{ p paths }

// Module declares timezone.system.
func Module(*modules.Env) []function.Func {
	s := &states{p: paths{localtime: "/etc/localtime", timezone: "/etc/timezone", adjtime: "/etc/adjtime", zoneinfo: "/usr/share/zoneinfo"}}
	return s.funcs()
}

func (s *states) funcs() []function.Func {
	return []function.Func{{Name: "timezone.system",
		Doc: "Set the system's time zone (name: Europe/Paris) and, with utc (True by default), a hardware clock in UTC.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			{Name: "utc", Kind: function.Bool, Default: true}},
		Run: s.system}}
}

// compare is Salt's timezone.zone_compare: whether /etc/localtime holds
// the zone's file; its error is Salt's comment.
func (s *states) compare(zone string) (bool, error) {
	want, err := os.ReadFile(filepath.Join(s.p.zoneinfo, zone))
	if err != nil || strings.Contains(zone, "..") {
		//lint:ignore ST1005 Salt's words, the state's comment.
		return false, fmt.Errorf("Can't find a local timezone \"%s\"", zone)
	}
	have, err := os.ReadFile(s.p.localtime)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		//lint:ignore ST1005 Salt's words, the state's comment.
		return false, fmt.Errorf("Failed to read %s to determine current timezone: %s", s.p.localtime, strerror(err))
	}
	return bytes.Equal(want, have), nil
}

// strerror is Python's strerror for err: "No such file or directory".
func strerror(err error) string {
	m := err.Error()
	if m == "" {
		return m
	}
	return strings.ToUpper(m[:1]) + m[1:]
}

// utc reports whether the hardware clock keeps UTC: /etc/adjtime's third
// line is not LOCAL (no /etc/adjtime: UTC).
func (s *states) utc() (bool, error) {
	b, err := os.ReadFile(s.p.adjtime)
	if errors.Is(err, os.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return len(lines) < 3 || strings.TrimSpace(lines[2]) != "LOCAL", nil
}

// setUTC writes the clock's mode into /etc/adjtime as timedatectl does:
// its third line, the file made with zero drift when missing.
func (s *states) setUTC(utc bool) error {
	mode := "LOCAL"
	if utc {
		mode = "UTC"
	}
	lines := []string{"0.0 0 0.0", "0", mode}
	if b, err := os.ReadFile(s.p.adjtime); err == nil {
		old := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		copy(lines, old[:min(2, len(old))])
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return atomicfile.WriteBytes(s.p.adjtime, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// setZone is Salt's timezone.set_zone on Debian.
func (s *states) setZone(zone string) error {
	target := filepath.Join(s.p.zoneinfo, zone)
	if _, err := os.Stat(target); err != nil {
		//lint:ignore ST1005 Salt's words.
		return fmt.Errorf("Zone does not exist: %s", target)
	}
	tmp := s.p.localtime + ".brine-new"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.p.localtime); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return atomicfile.WriteBytes(s.p.timezone, []byte(strings.TrimSpace(zone)+"\n"), 0o644)
}

func (s *states) system(ctx context.Context, in *function.Input) (any, error) {
	name, utc := in.String("name"), in.Bool("utc")
	ret := state.Result{Name: name}
	same, err := s.compare(name)
	if err != nil {
		return state.Failed(name, "Unable to compare desired timezone '%s' to system timezone: %v", name, err), nil
	}
	myUTC, err := s.utc()
	if err != nil {
		return state.Failed(name, "%v", err), nil
	}
	var messages []string
	if same {
		ret.Result = state.Bool(true)
		messages = append(messages, fmt.Sprintf("Timezone %s already set", name))
	}
	// As Salt's: only utc True is acted on (utc False leaves the clock
	// alone), and its "already set" message names the zone.
	doUTC := false
	if utc && utc != myUTC {
		ret.Result = nil
		doUTC = true
	} else if utc {
		messages = append(messages, fmt.Sprintf("UTC already set to %s", name))
	}
	if ret.Result != nil {
		ret.Comment = strings.Join(messages, ", ")
		return ret, nil
	}
	if state.From(ctx).Test {
		messages = nil
		if !same {
			messages = append(messages, fmt.Sprintf("Timezone %s needs to be set", name))
		}
		if doUTC {
			messages = append(messages, "UTC needs to be set to True")
		}
		ret.Comment = strings.Join(messages, ", ")
		return ret, nil
	}
	messages = nil
	ret.Changes = map[string]any{}
	if !same {
		if err := s.setZone(name); err != nil {
			messages = append(messages, "Failed to set timezone")
			ret.Result = state.Bool(false)
			ret.Warnings = append(ret.Warnings, err.Error())
		} else {
			ret.Changes["timezone"] = name
			messages = append(messages, fmt.Sprintf("Set timezone %s", name))
			ret.Result = state.Bool(true)
		}
	}
	if doUTC {
		if err := s.setUTC(utc); err != nil {
			messages = append(messages, "Failed to set UTC to True")
			ret.Result = state.Bool(false)
			ret.Warnings = append(ret.Warnings, err.Error())
		} else {
			ret.Changes["utc"] = utc
			messages = append(messages, "Set UTC to True")
			ret.Result = state.Bool(true)
		}
	}
	ret.Comment = strings.Join(messages, ", ")
	return ret, nil
}
