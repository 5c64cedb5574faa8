// Package mine is brine's host inventory, Salt's Mine made current: a record
// per host (id, fqdn, addresses, MACs, grains, cloud provider) kept in a
// durable key-value bucket, filled from salt-cloud's lifecycle events and
// from runner calls, and queried with Salt targets.
//
// Unlike Salt's mine, which minions refresh at most hourly and which keeps
// destroyed hosts until their key is deleted, the record is written when the
// cloud reports the host and removed when the cloud reports it destroyed;
// integrations (dnsmasq) watch the bucket and follow every change.
package mine

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/target"
)

// Host is one inventory record.
type Host struct {
	// ID is the host's name, the key of its record (a salt-cloud VM name or
	// minion id).
	ID string `json:"id"`
	// FQDN is the host's DNS name when a source reported one.
	FQDN string `json:"fqdn,omitempty"`
	// IPs holds IPv4 and IPv6 addresses, canonical text when they parse
	// (values that do not are kept as sent so that consumers can report them).
	IPs []string `json:"ips,omitempty"`
	// MACs holds hardware addresses, lower-case colon form when they parse.
	MACs []string `json:"macs,omitempty"`
	// Grains are Salt grains; cloud events add grains["salt-cloud"] with
	// driver, profile and provider, as salt-cloud gives its minions.
	Grains map[string]any `json:"grains,omitempty"`
	// Provider is salt-cloud's `<alias>:<driver>`.
	Provider string `json:"provider,omitempty"`
	// Driver is the cloud driver (ec2, vmware…).
	Driver string `json:"driver,omitempty"`
	// InstanceID is the cloud's id for the machine.
	InstanceID string `json:"instance_id,omitempty"`
	// Data holds values sent with mine.send under function names the record
	// has no field for, as Salt's mine stores any function's return.
	Data map[string]any `json:"data,omitempty"`
	// Source names what wrote the record last: an event tag or a function.
	Source string `json:"source,omitempty"`
	// Updated is when the record was last written (the master's clock).
	Updated time.Time `json:"updated"`
	// Seq is the log position of the newest event applied to the record:
	// event writes are ordered by it, not by clocks, which differ between
	// the machines that send events.
	Seq uint64 `json:"seq,omitempty"`
	// Revision is the record's revision in the bucket; writers pass it back
	// so that a concurrent change is detected instead of overwritten.
	Revision uint64 `json:"revision,omitempty"`
}

// ErrInvalidID reports an id that cannot name a record.
var ErrInvalidID = errors.New("invalid host id")

// ValidateID checks that id can be a record key: letters, digits and
// "-_.", dot-separated labels that are not empty, at most 253 bytes. Every
// host name and Salt minion id in practice qualifies.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > 253:
		return fmt.Errorf("%w: %q is %d bytes, the limit is 253", ErrInvalidID, id[:32]+"…", len(id))
	case strings.HasPrefix(id, ".") || strings.HasSuffix(id, ".") || strings.Contains(id, ".."):
		return fmt.Errorf("%w: %q has an empty label", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("%w: %q has %q at byte %d (letters, digits, '-', '_' and '.' only)", ErrInvalidID, id, c, i)
		}
	}
	return nil
}

// CanonicalIP returns the canonical text of an address, or s trimmed when
// it is not one.
func CanonicalIP(s string) string {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String()
	}
	return s
}

// LinkScoped reports whether a is a link-local or multicast address.
// Agents report every address of their interfaces, and these are among
// them; they mean nothing off their link, so no DNS or DHCP record is made
// of them.
func LinkScoped(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLinkLocalUnicast() || a.IsMulticast()
}

// CanonicalMAC returns a hardware address in lower-case colon form, or s
// trimmed when it is not one.
func CanonicalMAC(s string) string {
	s = strings.TrimSpace(s)
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String()
	}
	return s
}

// AddIPs adds addresses the record does not hold yet, after those it holds.
func (h *Host) AddIPs(ips ...string) {
	for _, ip := range ips {
		if ip = CanonicalIP(ip); ip != "" && !slices.Contains(h.IPs, ip) {
			h.IPs = append(h.IPs, ip)
		}
	}
}

// SetIPs replaces the addresses (duplicates and empty values dropped).
func (h *Host) SetIPs(ips ...string) {
	h.IPs = nil
	h.AddIPs(ips...)
}

// SetMACs replaces the hardware addresses (duplicates and empty values dropped).
func (h *Host) SetMACs(macs ...string) {
	h.MACs = nil
	for _, m := range macs {
		if m = CanonicalMAC(m); m != "" && !slices.Contains(h.MACs, m) {
			h.MACs = append(h.MACs, m)
		}
	}
}

// IPFamily returns the addresses of one family: 4 or 6.
func (h *Host) IPFamily(family int) []string {
	out := []string{}
	for _, s := range h.IPs {
		a, err := netip.ParseAddr(s)
		if err == nil && (a.Is4() || a.Is4In6()) == (family == 4) {
			out = append(out, s)
		}
	}
	return out
}

// setFamily replaces the addresses of one family, keeping the other's.
func (h *Host) setFamily(family int, ips []string) {
	other := h.IPFamily(10 - family) // 4 <-> 6
	h.SetIPs(append(ips, other...)...)
}

// MergeGrains updates grains key by key, as Salt's dict.update does.
func (h *Host) MergeGrains(g map[string]any) {
	if len(g) == 0 {
		return
	}
	if h.Grains == nil {
		h.Grains = make(map[string]any, len(g))
	}
	for k, v := range g {
		h.Grains[k] = v
	}
}

// SetAgentGrains takes the grains an agent reported as the host's: they
// replace the grains but for salt-cloud's, and give the record the agent's
// fully qualified name and its interfaces' MAC addresses (what dnsmasq
// reservations and DNS need), as the agent knows them best.
func (h *Host) SetAgentGrains(g map[string]any) {
	cloud := h.Grains["salt-cloud"]
	h.Grains = maps.Clone(g)
	if cloud != nil {
		h.Grains["salt-cloud"] = cloud
	}
	if f, ok := g["fqdn"].(string); ok && strings.Contains(f, ".") {
		h.FQDN = f
	}
	hw, _ := g["hwaddr_interfaces"].(map[string]any)
	var macs []string
	for _, name := range slices.Sorted(maps.Keys(hw)) {
		if s, ok := hw[name].(string); ok && s != "" && s != "00:00:00:00:00:00" {
			macs = append(macs, s)
		}
	}
	if len(macs) > 0 {
		h.SetMACs(macs...)
	}
}

// Functions the record answers directly; mine.get and mine.send map Salt's
// mine function names onto fields, any other name is kept in Data.
const (
	FunIPAddrs  = "network.ip_addrs"  // IPv4 addresses (Salt: IPv4 only)
	FunIPAddrs6 = "network.ip_addrs6" // IPv6 addresses
	FunHWAddr   = "network.hw_addr"   // the first MAC, a string
	FunGrains   = "grains.items"      // all grains
)

// Value returns what mine function fun holds for the host, and whether it
// holds anything: hosts without a value are left out of mine.get results,
// as Salt leaves out minions that did not send that function.
func (h *Host) Value(fun string) (any, bool) {
	nonEmptyList := func(l []string) (any, bool) {
		if len(l) == 0 {
			return nil, false
		}
		return slices.Clone(l), true
	}
	nonEmpty := func(s string) (any, bool) { return s, s != "" }
	switch fun {
	case "", "*":
		return h.summary(), true
	case "id":
		return h.ID, true
	case "fqdn":
		return nonEmpty(h.FQDN)
	case "ips":
		return nonEmptyList(h.IPs)
	case FunIPAddrs:
		return nonEmptyList(h.IPFamily(4))
	case FunIPAddrs6:
		return nonEmptyList(h.IPFamily(6))
	case "macs":
		return nonEmptyList(h.MACs)
	case FunHWAddr:
		if len(h.MACs) == 0 {
			return nil, false
		}
		return h.MACs[0], true
	case FunGrains, "grains":
		return h.Grains, len(h.Grains) > 0
	case "provider":
		return nonEmpty(h.Provider)
	case "driver":
		return nonEmpty(h.Driver)
	case "instance_id":
		return nonEmpty(h.InstanceID)
	case "source":
		return nonEmpty(h.Source)
	case "updated":
		return h.Updated.UTC().Format(time.RFC3339Nano), !h.Updated.IsZero()
	}
	v, ok := h.Data[fun]
	return v, ok
}

// summary is the whole record as plain values (what templates see).
func (h *Host) summary() map[string]any {
	m := map[string]any{"id": h.ID, "updated": h.Updated.UTC().Format(time.RFC3339Nano)}
	for k, v := range map[string]string{"fqdn": h.FQDN, "provider": h.Provider, "driver": h.Driver,
		"instance_id": h.InstanceID, "source": h.Source} {
		if v != "" {
			m[k] = v
		}
	}
	if len(h.IPs) > 0 {
		m["ips"] = slices.Clone(h.IPs)
	}
	if len(h.MACs) > 0 {
		m["macs"] = slices.Clone(h.MACs)
	}
	if len(h.Grains) > 0 {
		m["grains"] = h.Grains
	}
	if len(h.Data) > 0 {
		m["data"] = h.Data
	}
	return m
}

// ErrReadOnlyField reports a mine.send to a field only the mine writes.
var ErrReadOnlyField = errors.New("field is set by the mine itself")

// Set stores value under mine function fun (mine.send): known names set
// their field, others are kept in Data.
func (h *Host) Set(fun string, value any) error {
	switch fun {
	case "":
		return errors.New("empty function name")
	case "id", "source", "updated", "revision", "*":
		return fmt.Errorf("%q: %w", fun, ErrReadOnlyField)
	case "fqdn", "provider", "driver", "instance_id":
		s, ok := value.(string)
		if !ok {
			return fmt.Errorf("%q: want a string, got %T", fun, value)
		}
		switch fun {
		case "fqdn":
			h.FQDN = strings.TrimSpace(s)
		case "provider":
			h.Provider = s
		case "driver":
			h.Driver = s
		default:
			h.InstanceID = s
		}
	case "ips", FunIPAddrs, FunIPAddrs6:
		l, err := Strings(value)
		if err != nil {
			return fmt.Errorf("%q: %w", fun, err)
		}
		switch fun {
		case FunIPAddrs:
			h.setFamily(4, l)
		case FunIPAddrs6:
			h.setFamily(6, l)
		default:
			h.SetIPs(l...)
		}
	case "macs", FunHWAddr:
		l, err := Strings(value)
		if err != nil {
			return fmt.Errorf("%q: %w", fun, err)
		}
		if fun == FunHWAddr {
			l = append(l, h.MACs...) // the new one first, others kept
		}
		h.SetMACs(l...)
	case FunGrains, "grains":
		g, ok := value.(map[string]any)
		if !ok {
			return fmt.Errorf("%q: want a mapping, got %T", fun, value)
		}
		h.Grains = g
	default:
		if h.Data == nil {
			h.Data = map[string]any{}
		}
		h.Data[fun] = value
	}
	return nil
}

// Unset removes what fun holds (mine.delete with a function).
func (h *Host) Unset(fun string) error {
	switch fun {
	case "fqdn":
		h.FQDN = ""
	case "provider":
		h.Provider = ""
	case "driver":
		h.Driver = ""
	case "instance_id":
		h.InstanceID = ""
	case "ips":
		h.IPs = nil
	case FunIPAddrs:
		h.setFamily(4, nil)
	case FunIPAddrs6:
		h.setFamily(6, nil)
	case "macs", FunHWAddr:
		h.MACs = nil
	case FunGrains, "grains":
		h.Grains = nil
	case "id", "source", "updated", "revision", "*", "":
		return fmt.Errorf("%q: %w", fun, ErrReadOnlyField)
	default:
		delete(h.Data, fun)
	}
	return nil
}

// Facts are what a target matches the host by.
func (h *Host) Facts() target.Facts { return target.Facts{ID: h.ID, Grains: h.Grains} }

// Strings reads a list of strings from a decoded value: a list, one
// string, a comma-separated string, or a mapping's values (salt-cloud
// drivers report MACs per adapter), in key order.
func Strings(v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		var out []string
		for _, s := range strings.Split(t, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []string:
		return t, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("item %d: want a string, got %T", i, x)
			}
			out = append(out, s)
		}
		return out, nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(t))
		out := make([]string, 0, len(t))
		for _, k := range keys {
			s, ok := t[k].(string)
			if !ok {
				return nil, fmt.Errorf("key %q: want a string, got %T", k, t[k])
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, got %T", v)
}
