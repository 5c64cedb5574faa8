package main

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/brinehq/brine/api"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/ec2"
	"github.com/brinehq/brine/cloud/vmware"
	"github.com/brinehq/brine/config"
	"github.com/brinehq/brine/integrations/ddns"
	"github.com/brinehq/brine/integrations/dnsmasq"
	"github.com/brinehq/brine/integrations/slack"
)

// yamlKeys lists the yaml tag names of t's fields, descending into
// inlined, nested and element struct types.
func yamlKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("yaml")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
		if name != "-" && (strings.Contains(opts, "inline") || f.Type.PkgPath() == "" || strings.HasPrefix(f.Type.PkgPath(), "github.com/brinehq/")) {
			out = append(out, yamlKeys(f.Type)...)
		}
	}
	return out
}

// TestConfigurationDocumented fails when a configuration key the code
// accepts is not documented as `key` in docs/configuration.md.
func TestConfigurationDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	sections := map[string][]string{
		"core (config.Settings)": yamlKeys(reflect.TypeOf(config.Settings{})),
		// Keys decoded by name rather than through a struct.
		"core (jobs.Keep)": {"keep_jobs", "keep_jobs_seconds"},
		"reactor": {"reactor", "file_roots", "reactor_workers", "reactor_worker_threads",
			"reactor_max_in_flight", "reactor_max_depth", "reactor_retry", "attempts", "interval", "max_interval"},
		"ddns":    append(yamlKeys(reflect.TypeOf(ddns.Config{})), yamlKeys(reflect.TypeOf(ddns.SyncConfig{}))...),
		"dnsmasq": dnsmasq.KnownKeys(),
		"slack":   yamlKeys(reflect.TypeOf(slack.Config{})),
		"api":     yamlKeys(reflect.TypeOf(api.Settings{})),
		"cloud":   cloud.CommonKeys,
		"vmware":  vmware.KnownKeys(),
		"ec2":     ec2.KnownKeys(),
	}
	sections["top-level"] = append(sections["top-level"], "ddns", "dnsmasq", "slack", "api", "bus")
	for section, keys := range sections {
		if len(keys) == 0 {
			t.Errorf("%s: no keys found in the code", section)
		}
		for _, k := range keys {
			if !strings.Contains(doc, "`"+k+"`") {
				t.Errorf("docs/configuration.md: %s key `%s` is not documented", section, k)
			}
		}
	}
}
