// Package cloud provisions VMs the way salt-cloud does: providers, profiles
// and map files in salt-cloud's formats, a Driver per cloud API, and the
// lifecycle that creates and destroys VMs while firing salt-cloud's events
// (salt/cloud/<name>/creating … created, destroying … destroyed) in
// salt-cloud's order and with its payload keys, so reactions written for
// salt-cloud keep working.
//
// Drivers live in their own packages (cloud/vmware, cloud/ec2) and are
// handed to New by whoever wires the program, so this package depends on no
// cloud SDK.
package cloud

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/brinehq/brine/config"
)

// Errors drivers return and the lifecycle reports; test them with errors.Is.
var (
	// ErrNotFound: no node of that name exists.
	ErrNotFound = errors.New("not found")
	// ErrExists: a node of that name exists already, so it is not created
	// again (names are unique per provider; this is what makes a re-run
	// idempotent).
	ErrExists = errors.New("already exists")
	// ErrNotSupported: the provider has no such listing or action.
	ErrNotSupported = errors.New("not supported by this driver")
	// ErrIPTimeout: the node got no IP address within wait_for_ip_timeout.
	ErrIPTimeout = errors.New("timed out waiting for an IP address")
)

// Driver talks to one provider (one account of one cloud API). The
// lifecycle calls it; it fires no events itself.
//
// Create is split in steps so that the lifecycle can fire salt-cloud's
// events between them: Prepare checks the VM's settings and describes the
// API request (nothing is created, so a map is checked in full before the
// first VM exists, and --dry-run shows it), Create makes the request and
// returns as soon as the node has an id, WaitForIP waits for its address.
// A driver must be safe for concurrent use: VMs are created in parallel.
type Driver interface {
	// Prepare validates vm's settings (errors name file, line and key) and
	// returns the request Create will make.
	Prepare(ctx context.Context, vm *VM) (*Request, error)
	// Create makes the node described by req and returns it with its ID.
	// It returns an error matching ErrExists when a node of that name
	// exists, instead of making a second one.
	Create(ctx context.Context, req *Request) (*Node, error)
	// WaitForIP waits until node has an IP address and returns it
	// refreshed (IPs, MACs, state). It waits until ctx ends; the lifecycle
	// bounds it with the request's IPTimeout.
	WaitForIP(ctx context.Context, node *Node) (*Node, error)
	// Destroy stops and deletes node. A node already gone is not an error.
	Destroy(ctx context.Context, node *Node) error
	// Node returns the node called name, or an error matching ErrNotFound.
	Node(ctx context.Context, name string) (*Node, error)
	// Nodes lists the provider's nodes (not its images or templates).
	Nodes(ctx context.Context) ([]*Node, error)
	// Images, Sizes and Locations list what profiles may name; a provider
	// without such a notion returns ErrNotSupported.
	Images(ctx context.Context) ([]Resource, error)
	Sizes(ctx context.Context) ([]Resource, error)
	Locations(ctx context.Context) ([]Resource, error)
	// Close releases the connection.
	Close() error
}

// Opener connects a driver to a provider; credentials and endpoints are in
// p.Settings. An error here (wrong credentials, unreachable API) stops a
// run before anything is created.
type Opener func(ctx context.Context, p *Provider) (Driver, error)

// Request is a prepared create.
type Request struct {
	VM *VM
	// Kwargs are the API parameters, shown in the requesting event (Salt's
	// `kwargs`) and by --dry-run. They must hold no secret.
	Kwargs map[string]any
	// Location is where the node goes (region, datacenter).
	Location string
	// Source is the image or template the node is made from; hard maps
	// never destroy a node of that name.
	Source string
	// WaitForIP is false when the node will not get an address (e.g. not
	// powered on); then there is no waiting_for_ssh step.
	WaitForIP bool
	// IPTimeout bounds WaitForIP (Salt's wait_for_ip_timeout).
	IPTimeout time.Duration
	// Plan is the driver's own decoded form of the settings.
	Plan any
	// Warnings are about settings the driver ignores (a key it does not
	// know, often a typo); they are shown with the VM's result.
	Warnings []string
}

// CommonKeys are the keys the framework and the deploy step read, which a
// driver's Prepare must not report as unknown.
var CommonKeys = []string{
	"provider", "driver", "extends", "deploy", "minion", "grains", "script", "script_args", "script_env",
	"ssh_username", "ssh_port", "ssh_interface", "ssh_connect_timeout", "password", "private_key",
	"sudo", "sudo_password", "tmp_dir", "file_map", "make_master", "make_minion", "start_action", "filter_events",
	"ssh_host_key_check", "keep_tmp", "deploy_fail", "wait_for_passwd_maxtries", "agent_binaries",
}

// UnknownKeys lists, as warnings naming file and line, the keys of vm that
// are neither in CommonKeys nor in known.
func UnknownKeys(vm *VM, driver string, known []string) []string {
	all := append(append([]string{}, CommonKeys...), known...)
	var out []string
	for _, k := range sortedKeys(vm.Settings) {
		if slices.Contains(all, k) {
			continue
		}
		msg := fmt.Sprintf("%s: %s is not a %s setting brine knows; ignored", vm.Settings[k].Where(), k, driver)
		if s := config.Closest(k, all); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		out = append(out, msg)
	}
	return out
}

// Node is a VM as a provider reports it.
type Node struct {
	Name string `json:"name"`
	// ID is the provider's id (an EC2 instance id, a vSphere managed
	// object id).
	ID    string `json:"id"`
	State string `json:"state"`
	// PrivateIPs and PublicIPs are the node's addresses; PrivateIPs are
	// those in private, loopback and link-local ranges.
	PrivateIPs []string `json:"private_ips"`
	PublicIPs  []string `json:"public_ips"`
	MACs       []string `json:"macs"`
	Image      string   `json:"image,omitempty"`
	Size       string   `json:"size,omitempty"`
	// Profile is the profile the node was made from, when the provider
	// keeps it (the vSphere driver does, in the VM's extraConfig).
	Profile string `json:"profile,omitempty"`
	// Provider and Driver are filled by the lifecycle.
	Provider string `json:"provider"`
	Driver   string `json:"driver"`
	// Extra holds provider-specific details for --query and --json.
	Extra map[string]any `json:"extra,omitempty"`
}

// IP is the address salt-cloud would connect to: the first public one,
// else the first private one.
func (n *Node) IP() string {
	if len(n.PublicIPs) > 0 {
		return n.PublicIPs[0]
	}
	if len(n.PrivateIPs) > 0 {
		return n.PrivateIPs[0]
	}
	return ""
}

// SetIPs sorts addresses into PrivateIPs and PublicIPs, skipping
// duplicates and what does not parse.
func (n *Node) SetIPs(addrs []string) {
	n.PrivateIPs, n.PublicIPs = []string{}, []string{}
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || seen[ip] || ip.IsUnspecified() {
			continue
		}
		seen[ip] = true
		if ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			n.PrivateIPs = append(n.PrivateIPs, ip.String())
		} else {
			n.PublicIPs = append(n.PublicIPs, ip.String())
		}
	}
}

// Resource is an image, size or location a provider offers.
type Resource struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Details map[string]any `json:"details,omitempty"`
}
