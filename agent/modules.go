package agent

import (
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/modules/aliases"
	"github.com/brinehq/brine/modules/alternatives"
	beaconsmod "github.com/brinehq/brine/modules/beacons"
	"github.com/brinehq/brine/modules/cmd"
	"github.com/brinehq/brine/modules/config"
	"github.com/brinehq/brine/modules/cp"
	"github.com/brinehq/brine/modules/defaults"
	"github.com/brinehq/brine/modules/disk"
	"github.com/brinehq/brine/modules/event"
	"github.com/brinehq/brine/modules/file"
	"github.com/brinehq/brine/modules/grains"
	"github.com/brinehq/brine/modules/group"
	"github.com/brinehq/brine/modules/hosts"
	"github.com/brinehq/brine/modules/logmod"
	"github.com/brinehq/brine/modules/mine"
	"github.com/brinehq/brine/modules/network"
	"github.com/brinehq/brine/modules/pillar"
	"github.com/brinehq/brine/modules/pkg"
	"github.com/brinehq/brine/modules/saltutil"
	"github.com/brinehq/brine/modules/service"
	"github.com/brinehq/brine/modules/slsutil"
	"github.com/brinehq/brine/modules/ssh"
	statemod "github.com/brinehq/brine/modules/state"
	"github.com/brinehq/brine/modules/status"
	"github.com/brinehq/brine/modules/sys"
	"github.com/brinehq/brine/modules/sysctl"
	"github.com/brinehq/brine/modules/system"
	"github.com/brinehq/brine/modules/test"
	"github.com/brinehq/brine/modules/user"
)

// Modules are the agent's execution modules, one line each.
var Modules = []modules.Module{
	aliases.Module,
	alternatives.Module,
	beaconsmod.Module,
	cmd.Module,
	config.Module,
	cp.Module,
	defaults.Module,
	disk.Module,
	event.Module,
	file.Module,
	grains.Module,
	group.Module,
	hosts.Module,
	logmod.Module,
	mine.Module,
	network.Module,
	pillar.Module,
	pkg.Module,
	saltutil.Module,
	service.Module,
	slsutil.Module,
	ssh.Module,
	statemod.Module,
	status.Module,
	sysctl.Module,
	sys.Module,
	system.Module,
	test.Module,
	user.Module,
}

// ModuleOptions are the agent configuration keys execution modules read
// from their options (Salt's __opts__), known keys of the minion file.
var ModuleOptions = []string{
	"allow_reboot",       // system.reboot, shutdown, poweroff, halt
	"cmd_safe",           // cmd.*: False runs every command through the shell
	"cmd_blacklist_glob", // cmd.*: commands refused
	"cmd_whitelist_glob", // cmd.*: the only commands allowed
	"systemd.scope",      // service.*: False keeps systemd-run out
	"startup_states",     // state: highstate, sls or top, applied when the agent starts
	"sls_list",           // state: the SLS startup_states: sls applies
	"saltenv",            // state: the environment SLS files come from (base)
	"pillarenv",          // state, pillar: the pillar environment asked for
	"failhard",           // state: stop a state run at its first failure
	"test",               // state: every state run in test mode
	"state_events",       // state: fire salt/job/<jid>/prog/<id>/<n> per state
	"state_output",       // state: how `brine call` prints state returns
	"state_verbose",      // state: whether `brine call` prints states that changed nothing
	"nodegroups",         // state: nodegroups top files may match with
	"beacons",            // beacons: the agent's beacons (agent/beacons.go)
	"hosts.file",         // host.*: the hosts file the host states edit (/etc/hosts)
	"aliases.file",       // aliases.*, alias.*: the mail aliases file (/etc/aliases)
}
