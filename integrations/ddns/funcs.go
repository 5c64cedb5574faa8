package ddns

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinehq/brine/function"
	"github.com/miekg/dns"
)

// Tags of the events the functions fire, under brine/ddns/<zone>/.
const (
	TagUpdated = "updated"
	TagError   = "error"
)

// common are Salt's connection arguments, in Salt's positional order after
// the function's own.
func common(first ...function.Param) []function.Param {
	return append(first,
		function.Param{Name: "keyname", Kind: function.Any},
		function.Param{Name: "keyfile", Kind: function.Any},
		function.Param{Name: "nameserver", Kind: function.String},
		function.Param{Name: "timeout", Kind: function.Number},
	)
}

var (
	pZone   = function.Param{Name: "zone", Kind: function.String}
	pName   = function.Param{Name: "name", Kind: function.String, Required: true}
	pTTL    = function.Param{Name: "ttl", Kind: function.Int}
	pRdtype = function.Param{Name: "rdtype", Kind: function.Any}
	pData   = function.Param{Name: "data", Kind: function.Any}
	pPort   = function.Param{Name: "port", Kind: function.Int}
	pAlg    = function.Param{Name: "keyalgorithm", Kind: function.String}
)

// Funcs are ddns.add_host, delete_host, create, update and delete, with
// Salt's runner signatures (arguments bind by position in Salt's order or
// by keyword). Arguments not given come from c's configuration; timeout
// defaults to 5 s instead of being required; "None" means "not set", as in
// Salt's YAML files.
func (c *Client) Funcs() []function.Func {
	return []function.Func{
		{
			Name: "ddns.add_host", Doc: "Point a host's A/AAAA and PTR records at its addresses (RFC 2136)",
			Params: append(common(pZone, pName, pTTL, function.Param{Name: "ip", Kind: function.Any, Required: true}), pPort, pAlg),
			Run: c.run("add_host", func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error) {
				ips, err := ParseIPs(in.Value("ip"))
				if err != nil {
					return nil, err
				}
				return c.AddHost(ctx, zone, in.String("name"), ips, s)
			}),
		},
		{
			Name: "ddns.delete_host", Doc: "Remove a host's A/AAAA records and their PTRs, nothing else",
			Params: append(common(pZone, pName), pPort, pAlg),
			Run: c.run("delete_host", func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error) {
				return c.DeleteHost(ctx, zone, in.String("name"), s)
			}),
		},
		{
			Name: "ddns.create", Doc: "Add a DNS record unless one with the same data exists",
			Params: append(common(pZone, pName, pTTL, withRequired(pRdtype), withRequired(pData)), pPort, pAlg),
			Run: c.run("create", func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error) {
				return c.Create(ctx, zone, in.String("name"), optional(in, "rdtype"), optional(in, "data"), s)
			}),
		},
		{
			Name: "ddns.update", Doc: "Change an existing DNS record (replace=True: make it the only one of its type)",
			Params: append(common(pZone, pName, pTTL, withRequired(pRdtype), withRequired(pData)),
				function.Param{Name: "replace", Kind: function.Bool, Default: false}, pPort, pAlg),
			Run: c.run("update", func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error) {
				return c.Update(ctx, zone, in.String("name"), optional(in, "rdtype"), optional(in, "data"), in.Bool("replace"), s)
			}),
		},
		{
			Name: "ddns.delete", Doc: "Delete a name's records, one RRset (rdtype) or one record (rdtype and data)",
			Params: append(common(pZone, pName), pRdtype, pData, pPort, pAlg),
			Run: c.run("delete", func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error) {
				return c.Delete(ctx, zone, in.String("name"), optional(in, "rdtype"), optional(in, "data"), s)
			}),
		},
	}
}

func withRequired(p function.Param) function.Param {
	p.Required = true
	return p
}

// optional reads an argument that Salt files may set to None.
func optional(in *function.Input, name string) string {
	switch v := in.Value(name).(type) {
	case string:
		if v == "None" {
			return ""
		}
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

type action func(ctx context.Context, in *function.Input, zone string, s Settings) (*Change, error)

// run wraps an action as a registry handler: it reads the common
// arguments, resolves the zone, returns Salt's result shape ({fqdn:
// messages}) and fires brine/ddns/<zone>/updated or /error.
func (c *Client) run(op string, act action) function.Handler {
	return func(ctx context.Context, in *function.Input) (any, error) {
		s := Settings{
			Nameserver:   in.String("nameserver"),
			Port:         int(in.Int("port")),
			Keyfile:      optional(in, "keyfile"),
			Keyname:      optional(in, "keyname"),
			Keyalgorithm: in.String("keyalgorithm"),
			Timeout:      in.Float("timeout"),
			TTL:          int(in.Int("ttl")),
		}
		zone := in.String("zone")
		if zone == "" {
			fq := dns.CanonicalName(in.String("name"))
			if zone = c.conf().zoneFor(fq); zone == "" {
				return nil, &function.ArgError{Func: in.Func, Arg: "zone",
					Err: fmt.Errorf("%w (and no zone under ddns: zones holds %q)", function.ErrMissingArgument, in.String("name"))}
			}
		}
		tagZone := strings.TrimSuffix(dns.CanonicalName(zone), ".")
		ch, err := act(ctx, in, zone, s)
		if err != nil {
			data := map[string]any{"action": op, "zone": tagZone, "name": in.String("name"), "error": err.Error()}
			var re *RcodeError
			if errors.As(err, &re) {
				data["rcode"] = dns.RcodeToString[re.Rcode]
			}
			c.fire(ctx, in, "brine/ddns/"+tagZone+"/"+TagError, data)
			return nil, err
		}
		if ch.Changed() {
			c.fire(ctx, in, "brine/ddns/"+tagZone+"/"+TagUpdated, map[string]any{
				"action": op, "zone": tagZone, "fqdn": ch.FQDN, "added": ch.Added, "removed": ch.Removed,
			})
		}
		return map[string]any{strings.TrimSuffix(ch.FQDN, "."): ch.Messages}, nil
	}
}

// fire reports a change on the bus; a call made without a bus (brine
// reactor test) has none, which is fine.
func (c *Client) fire(ctx context.Context, in *function.Input, tag string, data map[string]any) {
	if err := in.Fire(ctx, tag, data); err != nil && !errors.Is(err, function.ErrNoEvents) {
		c.log.Warn("ddns: cannot fire event", "tag", tag, "err", err)
	}
}
