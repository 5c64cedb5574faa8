// Package beacons is Salt's beacons execution module: list, add, modify,
// delete, enable and disable the agent's beacons while it runs, save them
// into its configuration so that they survive a restart, and list the
// beacon modules. Each change fires Salt's
// salt/minion/<id>/beacons_<action>_complete event with the beacons in
// force.
package beacons

import (
	"context"
	"fmt"
	"maps"

	"github.com/goccy/go-yaml"

	"github.com/brinehq/brine/beacons"
	"github.com/brinehq/brine/function"
	"github.com/brinehq/brine/modules"
)

// Module declares the beacons functions.
func Module(env *modules.Env) []function.Func {
	b := &mgr{env: env}
	name := function.Param{Name: "name", Kind: function.String, Required: true}
	data := function.Param{Name: "beacon_data", Kind: function.Any, Required: true}
	yamlOut := function.Param{Name: "return_yaml", Kind: function.Bool, Default: true}
	test := function.Param{Name: "test", Kind: function.Bool, Default: false}
	return []function.Func{
		{Name: "beacons.list", Doc: "The beacons in force (YAML text; return_yaml=False: a mapping).", ReadOnly: true,
			Params: []function.Param{yamlOut, {Name: "include_pillar", Kind: function.Bool, Default: true},
				{Name: "include_opts", Kind: function.Bool, Default: true}},
			Run: b.list},
		{Name: "beacons.list_available", Doc: "The beacon modules this agent has.", ReadOnly: true,
			Params: []function.Param{yamlOut}, Run: b.available},
		{Name: "beacons.add", Doc: "Add and start the beacon name with beacon_data (Salt's list form).",
			Params: []function.Param{name, data, test}, VarKwargs: true, Run: b.change("add")},
		{Name: "beacons.modify", Doc: "Replace the configuration of the beacon name with beacon_data.",
			Params: []function.Param{name, data, test}, VarKwargs: true, Run: b.change("modify")},
		{Name: "beacons.delete", Doc: "Stop and remove the beacon name.",
			Params: []function.Param{name, test}, VarKwargs: true, Run: b.change("delete")},
		{Name: "beacons.enable_beacon", Doc: "Start the beacon name again.",
			Params: []function.Param{name, test}, VarKwargs: true, Run: b.change("enable_beacon")},
		{Name: "beacons.disable_beacon", Doc: "Stop the beacon name, keeping its configuration.",
			Params: []function.Param{name, test}, VarKwargs: true, Run: b.change("disable_beacon")},
		{Name: "beacons.enable", Doc: "Run the beacons (all).", Params: []function.Param{test}, VarKwargs: true, Run: b.change("enable")},
		{Name: "beacons.disable", Doc: "Stop every beacon, keeping their configuration.", Params: []function.Param{test}, VarKwargs: true,
			Run: b.change("disable")},
		{Name: "beacons.save", Doc: "Write the beacons in force to the agent's configuration (minion.d/beacons.conf).",
			VarKwargs: true, Run: b.save},
		{Name: "beacons.reset", Doc: "Put the configuration files' beacons in force again.", Params: []function.Param{test},
			VarKwargs: true, Run: b.change("reset")},
	}
}

type mgr struct{ env *modules.Env }

func (b *mgr) beacons() (modules.Beacons, error) {
	if b.env.Beacons == nil {
		return nil, fmt.Errorf("this agent runs no beacons")
	}
	return b.env.Beacons, nil
}

func (b *mgr) list(_ context.Context, in *function.Input) (any, error) {
	bs, err := b.beacons()
	if err != nil {
		return nil, err
	}
	cfg, enabled := bs.Config()
	out := beacons.ListForm(cfg, enabled)
	if !in.Bool("return_yaml") {
		return out, nil
	}
	text, err := yaml.Marshal(map[string]any{"beacons": out})
	return string(text), err
}

func (b *mgr) available(_ context.Context, in *function.Input) (any, error) {
	bs, err := b.beacons()
	if err != nil {
		return nil, err
	}
	names := make([]any, 0)
	for _, n := range bs.Available() {
		names = append(names, n)
	}
	if !in.Bool("return_yaml") {
		return names, nil
	}
	text, err := yaml.Marshal(map[string]any{"beacons": names})
	return string(text), err
}

// change is add, modify, delete, enable(_beacon), disable(_beacon) and
// reset: Salt's {comment, result} and its completion event.
func (b *mgr) change(action string) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		bs, err := b.beacons()
		if err != nil {
			return nil, err
		}
		name := in.String("name")
		cfg, enabled := bs.Config()
		fail := func(format string, args ...any) (any, error) {
			return map[string]any{"result": false, "comment": fmt.Sprintf(format, args...)}, nil
		}
		var comment string
		switch action {
		case "add", "modify":
			_, exists := cfg[name]
			if action == "add" && exists {
				return fail("Beacon %s is already configured.", name)
			}
			if action == "modify" && !exists {
				return fail("Beacon %s is not configured.", name)
			}
			m, err := bs.Check(name, in.Value("beacon_data"))
			if err != nil {
				return fail("Beacon %s configuration invalid, not %s.\n%v", name, map[string]string{"add": "adding", "modify": "modifying"}[action], err)
			}
			if in.Bool("test") {
				return map[string]any{"result": true, "comment": fmt.Sprintf("Beacon: %s would be %s.", name, map[string]string{"add": "added", "modify": "modified"}[action])}, nil
			}
			cfg[name] = m
			comment = map[string]string{"add": "Added beacon: %s.", "modify": "Modified beacon: %s."}[action]
			comment = fmt.Sprintf(comment, name)
		case "delete", "enable_beacon", "disable_beacon":
			m, exists := cfg[name]
			if !exists {
				return fail("Beacon %s is not configured.", name)
			}
			if in.Bool("test") {
				return map[string]any{"result": true, "comment": fmt.Sprintf("Beacon: %s would be %s.", name,
					map[string]string{"delete": "deleted", "enable_beacon": "enabled", "disable_beacon": "disabled"}[action])}, nil
			}
			switch action {
			case "delete":
				delete(cfg, name)
				comment = fmt.Sprintf("Deleted beacon: %s.", name)
			case "enable_beacon":
				m = maps.Clone(m)
				delete(m, "enabled")
				cfg[name] = m
				comment = fmt.Sprintf("Enabled beacon %s on minion.", name)
			case "disable_beacon":
				m = maps.Clone(m)
				m["enabled"] = false
				cfg[name] = m
				comment = fmt.Sprintf("Disabled beacon %s on minion.", name)
			}
		case "enable", "disable":
			if in.Bool("test") {
				return map[string]any{"result": true, "comment": fmt.Sprintf("Beacons would be %sd.", action)}, nil
			}
			enabled = action == "enable"
			comment = map[bool]string{true: "Enabled beacons on minion.", false: "Disabled beacons on minion."}[enabled]
		case "reset":
			if in.Bool("test") {
				return map[string]any{"result": true, "comment": "Beacons would be reset."}, nil
			}
			if err := bs.Reset(); err != nil {
				return fail("Beacon configuration could not be reset: %v", err)
			}
			b.complete(ctx, "reset", bs)
			return map[string]any{"result": true, "comment": "Beacon configuration reset."}, nil
		}
		if err := bs.Set(cfg, enabled); err != nil {
			return fail("Failed to %s beacon %s: %v", action, name, err)
		}
		b.complete(ctx, action, bs)
		return map[string]any{"result": true, "comment": comment}, nil
	}
}

// complete fires Salt's completion event of an action with the beacons in
// force.
func (b *mgr) complete(ctx context.Context, action string, bs modules.Beacons) {
	if b.env.FireMaster == nil {
		return
	}
	cfg, enabled := bs.Config()
	tag := fmt.Sprintf("salt/minion/%s/beacons_%s_complete", b.env.ID, action)
	_ = b.env.FireMaster(ctx, tag, map[string]any{"complete": true, "beacons": beacons.ListForm(cfg, enabled)})
}

func (b *mgr) save(ctx context.Context, _ *function.Input) (any, error) {
	bs, err := b.beacons()
	if err != nil {
		return nil, err
	}
	path, err := bs.Save()
	if err != nil {
		return map[string]any{"result": false, "comment": "Unable to write to beacons file: " + err.Error()}, nil
	}
	b.complete(ctx, "save", bs)
	return map[string]any{"result": true, "comment": fmt.Sprintf("Beacons saved to %s.", path)}, nil
}
