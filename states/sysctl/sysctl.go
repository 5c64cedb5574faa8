// Package sysctl is Salt's sysctl state module: sysctl.present, a kernel
// parameter set now (/proc/sys) and in a configuration file read at boot,
// with Salt's comments and changes ({name: value}).
//
// The work is the sysctl execution module's (sysctl.persist, sysctl.get,
// sysctl.show), as in Salt: the configuration file is Salt's default,
// /etc/sysctl.d/99-salt.conf when systemd (207 or later) runs the
// machine, else /etc/sysctl.conf.
package sysctl

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/internal/py"
	"github.com/brinehq/brine/modules"
	sysctlmod "github.com/brinehq/brine/modules/sysctl"
	"github.com/brinehq/brine/state"
)

// Module declares sysctl.present.
func Module(*modules.Env) []function.Func {
	s := &states{k: sysctlmod.Host}
	return []function.Func{{
		Name: "sysctl.present", Doc: "Ensure the kernel parameter name has value, now and in the configuration file config.",
		Params: []function.Param{{Name: "name", Kind: function.String, Required: true},
			{Name: "value", Kind: function.Any, Required: true}, {Name: "config", Kind: function.Any}},
		Run: func(ctx context.Context, in *function.Input) (any, error) { return s.present(ctx, in), nil },
	}}
}

type states struct{ k *sysctlmod.Kernel }

var blanks = regexp.MustCompile(` +|\t+`)

func (s *states) present(ctx context.Context, in *function.Input) state.Result {
	name := in.String("name")
	value := py.Str(in.Value("value"))
	config := s.k.DefaultConfig()
	if v := in.Value("config"); v != nil {
		config = py.Str(v)
	}
	if state.From(ctx).Test {
		configured, err := sysctlmod.Show(config)
		if err != nil {
			return state.Pending(name, fmt.Sprintf("Sysctl option %s might be changed, we failed to check config file at "+
				"%s. The file is either unreadable, or missing.", name, config), nil)
		}
		current := s.k.Get(name)
		_, inConfig := configured[name]
		switch {
		case current != "" && inConfig:
			if strings.Join(strings.Fields(value), " ") == strings.Join(strings.Fields(current), " ") {
				return state.Succeeded(name, fmt.Sprintf("Sysctl value %s = %s is already set", name, value), nil)
			}
		case current != "":
			if blanks.ReplaceAllString(current, " ") != blanks.ReplaceAllString(value, " ") {
				return state.Pending(name, fmt.Sprintf("Sysctl option %s set to be changed to %s", name, value), nil)
			}
			return state.Pending(name, fmt.Sprintf("Sysctl value is currently set on the running system but not in a "+
				"config file. Sysctl option %s set to be changed to %s in config file.", name, value), nil)
		case inConfig:
			return state.Pending(name, fmt.Sprintf("Sysctl value %[1]s is present in configuration file but is not "+
				"present in the running config. The value %[1]s is set to be changed to %[2]s", name, value), nil)
		}
		return state.Pending(name, fmt.Sprintf("Sysctl option %s would be changed to %s", name, value), nil)
	}
	update, err := s.k.Persist(name, value, config)
	if err != nil {
		return state.Failed(name, "Failed to set %s to %s: %v", name, value, err)
	}
	if update == "Updated" {
		return state.Succeeded(name, fmt.Sprintf("Updated sysctl value %s = %s", name, value),
			map[string]any{name: in.Value("value")})
	}
	return state.Succeeded(name, fmt.Sprintf("Sysctl value %s = %s is already set", name, value), nil)
}
