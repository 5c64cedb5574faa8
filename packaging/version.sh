#!/bin/sh
# version.sh prints the packages' version, from `git describe` as the
# binaries' stamp is, in a form dpkg and rpm both order by release:
#   v1.4.0                 -> 1.4.0
#   v1.4.0-12-gabc1234     -> 1.4.0+12.gabc1234   (after 1.4.0, before 1.4.1)
#   no tag yet             -> 0.0.0+<commits>.g<hash> (ordered by commit count)
# and ".dirty" when the work tree has changes. No "-" is left: rpm forbids it
# in a version and dpkg would take what follows for a Debian revision.
set -e
cd "$(dirname "$0")/.."
if d=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
	v=${d#v}
	case "$v" in
	*-*-g*) # 1.4.0-12-gabc1234[-dirty]
		base=${v%%-*}
		rest=${v#*-}
		v="$base+$(echo "$rest" | tr - .)"
		;;
	*-dirty) v="${v%-dirty}+dirty" ;;
	esac
else
	n=$(git rev-list --count HEAD)
	h=$(git rev-parse --short=7 HEAD)
	v="0.0.0+$n.g$h"
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		v="$v.dirty"
	fi
fi
echo "$v"
