package cloud

// eventFilter is one task's entry of salt-cloud's filter_events:
//
//	filter_events:
//	  creating:
//	    keys: [name, profile, provider, driver, clonefrom, grains]
//	    use_defaults: True   # False: only the listed keys
type eventFilter struct {
	Keys        []string `yaml:"keys"`
	UseDefaults *bool    `yaml:"use_defaults"`
}

// filterEvent applies the VM's filter_events entry for task to data, as
// salt-cloud's filter_event does: listed keys are added from the VM's
// settings (never a credential, which Salt would copy), and with
// use_defaults False only the listed keys stay. Without an entry, data is
// returned as is.
func filterEvent(vm *VM, task string, data map[string]any) (map[string]any, error) {
	var filters map[string]eventFilter
	if err := vm.Settings.Decode("filter_events", &filters); err != nil {
		return nil, err
	}
	f, ok := filters[task]
	if !ok {
		return data, nil
	}
	out := map[string]any{}
	if f.UseDefaults == nil || *f.UseDefaults {
		for k, v := range data {
			out[k] = v
		}
	}
	for _, k := range f.Keys {
		if v, ok := data[k]; ok {
			out[k] = v
			continue
		}
		if IsSecretKey(k) || !vm.Settings.Has(k) {
			continue
		}
		var v any
		if err := vm.Settings.Decode(k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}
