// Package drivers lists the cloud drivers this binary has, by the names
// salt-cloud's provider files use: one line per driver. Both `brine cloud`
// and the master's cloud runner functions open providers through it.
package drivers

import (
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/ec2"
	"github.com/brinehq/brine/cloud/vmware"
)

// Openers are the drivers by name.
var Openers = map[string]cloud.Opener{
	vmware.Driver: vmware.Open,
	ec2.Driver:    ec2.Open,
}
