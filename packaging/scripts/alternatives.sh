# Shell functions the package scripts source: Salt's command names as
# alternatives (update-alternatives on Debian, alternatives on RHEL), so
# that brine and a real Salt beside it are chosen by priority or by the
# administrator (update-alternatives --config salt), never by a file clash.

brine_alternatives() {
	if command -v update-alternatives >/dev/null 2>&1; then
		update-alternatives "$@"
	else
		alternatives "$@"
	fi
}

# brine_alt_install NAME TARGET PRIORITY [PAGE]: /usr/bin/NAME -> TARGET,
# and with PAGE, man NAME -> man PAGE (salt-key's page is brine-key's) as a
# slave link that follows the choice. A real file at /usr/bin/NAME (Salt's
# own package, which ships its commands as files) is left alone:
# update-alternatives keeps it and says so.
brine_alt_install() {
	if [ -n "${4:-}" ]; then
		brine_alternatives --install "/usr/bin/$1" "$1" "$2" "$3" \
			--slave "/usr/share/man/man1/$1.1.gz" "$1.1.gz" "/usr/share/man/man1/$4.1.gz" >/dev/null
	else
		brine_alternatives --install "/usr/bin/$1" "$1" "$2" "$3" >/dev/null
	fi
}

brine_alt_remove() {
	brine_alternatives --remove "$1" "$2" >/dev/null 2>&1 || true
}
