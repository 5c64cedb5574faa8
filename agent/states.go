package agent

import (
	"github.com/brinehq/brine/modules"
	"github.com/brinehq/brine/states/alias"
	"github.com/brinehq/brine/states/alternatives"
	"github.com/brinehq/brine/states/archive"
	"github.com/brinehq/brine/states/cmd"
	"github.com/brinehq/brine/states/cron"
	"github.com/brinehq/brine/states/event"
	"github.com/brinehq/brine/states/file"
	"github.com/brinehq/brine/states/git"
	"github.com/brinehq/brine/states/group"
	"github.com/brinehq/brine/states/host"
	"github.com/brinehq/brine/states/locale"
	"github.com/brinehq/brine/states/module"
	"github.com/brinehq/brine/states/mount"
	"github.com/brinehq/brine/states/pkg"
	"github.com/brinehq/brine/states/pkgrepo"
	"github.com/brinehq/brine/states/service"
	"github.com/brinehq/brine/states/sshauth"
	"github.com/brinehq/brine/states/sshknownhosts"
	"github.com/brinehq/brine/states/sysctl"
	"github.com/brinehq/brine/states/test"
	"github.com/brinehq/brine/states/timezone"
	"github.com/brinehq/brine/states/user"
)

// States are the agent's state modules, one line each.
var States = []modules.Module{
	alias.Module,
	archive.Module,
	alternatives.Module,
	cmd.Module,
	cron.Module,
	event.Module,
	file.Module,
	git.Module,
	group.Module,
	host.Module,
	locale.Module,
	module.Module,
	mount.Module,
	pkg.Module,
	pkgrepo.Module,
	service.Module,
	sshauth.Module,
	sshknownhosts.Module,
	sysctl.Module,
	test.Module,
	timezone.Module,
	user.Module,
}
