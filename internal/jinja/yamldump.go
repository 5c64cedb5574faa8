package jinja

// DumpYAML is v as PyYAML's safe_dump writes it (the emitter Salt's yaml
// filter uses): mappings with their keys sorted, block style unless flow,
// strings quoted as PyYAML quotes them, no final newline. file.serialize
// writes YAML files with it, so that a file reads as the one Salt writes.
func DumpYAML(v any, flow bool) (string, error) { return pyYAMLDump(v, flow) }
