package ec2

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/brinehq/brine/cloud"
)

// Defaults, salt-cloud's where it has one.
const (
	// DefaultRegion is used when the provider sets no location.
	DefaultRegion = "us-east-1"
	// DefaultIPTimeout is salt-cloud's EC2 wait_for_ip_timeout: how long
	// an instance may take to run.
	DefaultIPTimeout = 600 * time.Second
	// DefaultPollInterval is the first delay between polls of a starting
	// instance (salt-cloud's wait_for_ip_interval); later ones grow.
	DefaultPollInterval = 5 * time.Second
	// DefaultMaxAttempts bounds the tries of one API call that EC2
	// throttles or fails transiently.
	DefaultMaxAttempts = 10
)

// providerKeys are the provider keys Open reads.
var providerKeys = []string{"id", "key", "keyname", "location", "endpoint", "max_attempts", "owner"}

// profile is one VM's settings as this driver reads them, with
// salt-cloud's EC2 key names.
type profile struct {
	Image            string
	Size             string
	KeyName          string
	Zone             string
	SecurityGroups   []string
	SecurityGroupIDs []string
	Subnet           string
	IAMProfile       string
	Tags             map[string]string
	Devices          []blockDevice
	IPTimeout        time.Duration
	PollInterval     time.Duration
}

// blockDevice is one entry of block_device_mappings, in salt-cloud's form:
//
//	block_device_mappings:
//	  - DeviceName: /dev/sdb
//	    Ebs.VolumeSize: 100
//	    Ebs.VolumeType: gp3
type blockDevice struct {
	DeviceName          string `yaml:"DeviceName"`
	VirtualName         string `yaml:"VirtualName"`
	VolumeSize          int32  `yaml:"Ebs.VolumeSize"`
	VolumeType          string `yaml:"Ebs.VolumeType"`
	IOPS                int32  `yaml:"Ebs.Iops"`
	SnapshotID          string `yaml:"Ebs.SnapshotId"`
	DeleteOnTermination *bool  `yaml:"Ebs.DeleteOnTermination"`
	Encrypted           *bool  `yaml:"Ebs.Encrypted"`
}

// unsupported are salt-cloud EC2 keys brine reads but cannot honour yet;
// a profile setting one fails, since ignoring it would make another VM
// than the one asked for.
var unsupported = map[string]string{
	"spot_config":        "spot instances are not supported yet",
	"network_interfaces": "network_interfaces are not supported yet (use subnetid and securitygroupid)",
	"volumes":            "volumes are not supported yet (use block_device_mappings)",
	"userdata_file":      "userdata_file is not supported yet",
	"userdata":           "userdata is not supported yet",
	"ebs_optimized":      "ebs_optimized is not supported yet",
	"placementgroup":     "placementgroup is not supported yet",
}

// profileKeys are the keys decodeProfile reads.
var profileKeys = []string{"image", "size", "availability_zone", "securitygroup", "securitygroupid", "subnetid",
	"iam_profile", "tag", "block_device_mappings", "wait_for_ip_timeout", "wait_for_ip_interval"}

// knownKeys are every key this driver reads or refuses by name.
func knownKeys() []string {
	out := append(append([]string(nil), providerKeys...), profileKeys...)
	for k := range unsupported {
		out = append(out, k)
	}
	return out
}

// decodeProfile reads the driver's keys from a VM's settings; errors name
// the file, line and key.
func decodeProfile(vm *cloud.VM) (*profile, error) {
	s := vm.Settings
	keys := slices.Sorted(maps.Keys(unsupported))
	for _, k := range keys {
		if s.Has(k) {
			return nil, s[k].Errorf("%s", unsupported[k])
		}
	}
	p := &profile{Tags: map[string]string{}}
	for key, out := range map[string]*string{"image": &p.Image, "size": &p.Size, "keyname": &p.KeyName,
		"availability_zone": &p.Zone, "subnetid": &p.Subnet, "iam_profile": &p.IAMProfile} {
		if err := s.Decode(key, out); err != nil {
			return nil, err
		}
	}
	if p.Image == "" {
		return nil, fmt.Errorf("%w: %s:%d: profile %s: no image (an AMI id, e.g. image: ami-0abcdef1234567890)", cloud.ErrConfig, vm.Profile.File, vm.Profile.Line, vm.Profile.Name)
	}
	if p.Size == "" {
		return nil, fmt.Errorf("%w: %s:%d: profile %s: no size (an instance type, e.g. size: t3.micro)", cloud.ErrConfig, vm.Profile.File, vm.Profile.Line, vm.Profile.Name)
	}
	var err error
	if p.SecurityGroups, err = stringOrList(s, "securitygroup"); err != nil {
		return nil, err
	}
	if p.SecurityGroupIDs, err = stringOrList(s, "securitygroupid"); err != nil {
		return nil, err
	}
	if err := s.Decode("tag", &p.Tags); err != nil {
		return nil, err
	}
	for k := range p.Tags {
		if k == "" || strings.HasPrefix(strings.ToLower(k), "aws:") {
			return nil, s["tag"].Errorf("tag key %q is not allowed", k)
		}
	}
	if err := s.Decode("block_device_mappings", &p.Devices); err != nil {
		return nil, err
	}
	for i, d := range p.Devices {
		if d.DeviceName == "" {
			return nil, s["block_device_mappings"].Errorf("entry %d has no DeviceName", i+1)
		}
	}
	if p.IPTimeout, err = seconds(s, "wait_for_ip_timeout", DefaultIPTimeout); err != nil {
		return nil, err
	}
	if p.PollInterval, err = seconds(s, "wait_for_ip_interval", DefaultPollInterval); err != nil {
		return nil, err
	}
	return p, nil
}

// stringOrList reads a key salt-cloud accepts as one value or a list.
func stringOrList(s cloud.Settings, key string) ([]string, error) {
	var v any
	if err := s.Decode(key, &v); err != nil {
		return nil, err
	}
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []string{t}, nil
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			str, ok := x.(string)
			if !ok || str == "" {
				return nil, s[key].Errorf("want a name or a list of names")
			}
			out = append(out, str)
		}
		return out, nil
	}
	return nil, s[key].Errorf("want a name or a list of names")
}

// seconds reads a positive number of seconds.
func seconds(s cloud.Settings, key string, def time.Duration) (time.Duration, error) {
	secs := def.Seconds()
	if err := s.Decode(key, &secs); err != nil {
		return 0, err
	}
	if secs <= 0 {
		return 0, s[key].Errorf("must be a positive number of seconds")
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// KnownKeys lists the provider and profile keys this driver reads or
// refuses by name (the configuration reference is checked against it).
func KnownKeys() []string { return knownKeys() }
