# brine — see README.md. Targets: demo, test, check, interop, bench, chaos, lint, build, cross, sizes, packages, fuzz.
GO            ?= go
BIN           := bin/brine
AGENT_BIN     := bin/brine-agent
# Every binary is static (CGO_ENABLED=0: no libc needed, it runs on any
# Linux), has no build paths (-trimpath), is stripped (-s -w) and carries
# its release and commit (brine version), from git describe, read once
# (:=) so that a commit made during a long build cannot stamp two binaries
# differently; make VERSION=… overrides.
VERSION       := $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT        := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS       := -s -w -X github.com/brinehq/brine/cli/agentcmd.version=$(VERSION) -X github.com/brinehq/brine/cli/agentcmd.commit=$(COMMIT)
GOBUILD        = CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
# make cross: brine-agent for every OS and architecture a fleet runs, the
# full brine for the masters' (GOOS/GOARCH; linux/arm is ARMv7).
CROSS_AGENT   := linux/amd64 linux/arm64 linux/386 linux/arm windows/amd64 darwin/arm64 darwin/amd64 freebsd/amd64
CROSS_BRINE   := linux/amd64 linux/arm64
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Debian packages the tests start as real peers (installed when missing);
# the python3-* ones run Salt 3006.6 from ../shared/peers, which saltproto's
# tests hold brine to.
DEB_PACKAGES  ?= bind9 bind9-dnsutils dnsmasq-base busybox udhcpc iproute2 curl openssh-server python3 python3-zmq iputils-ping git cron \
	python3-msgpack python3-pycryptodome python3-yaml python3-jinja2 python3-markupsafe python3-psutil python3-distro \
	python3-packaging python3-jmespath python3-requests chromium \
	systemd man-db rpm
# Packages where concurrency lives run under the race detector (e2e: the
# system tests, which drive the master and agents cmd/brine builds).
RACE_PKGS     := ./bus/... ./reactor/... ./cmd/... ./e2e/ ./api/... ./master/... ./agent/... ./keys/... ./jobs/... ./remote/... ./state/... ./beacons/ ./lease/ ./saltmaster/
# make check's tests leave out the system tests (e2e) and the chaos run's
# short profile (bench/chaos): both start masters, agents and peers,
# need root and network namespaces, and take minutes; make test runs them.
CHECK_SKIP    := /e2e$$|/bench/chaos$$
FUZZTIME      ?= 30s

.PHONY: all build cross sizes demo test check deps lint bench chaos fuzz clean interop packages test-windows

# phase prints, as a phase of a target starts, its name and the time, so
# that a long run says where it is: $(call phase,test,go vet,2/5).
phase = @echo "== make $(1): $(2) ($(3)) at $$(date -u +%H:%M:%S) UTC"

all: build

# build makes bin/brine (master, CLI and agent) and bin/brine-agent (the
# agent alone, for managed machines), for this machine.
build:
	$(GOBUILD) -o $(BIN) ./cmd/brine
	$(GOBUILD) -o $(AGENT_BIN) ./cmd/brine-agent

# cross makes bin/cross/brine-agent-OS-ARCH[.exe] for CROSS_AGENT and
# bin/cross/brine-OS-ARCH for CROSS_BRINE, and fails naming every target
# that does not build.
cross:
	@mkdir -p bin/cross; failed=""; \
	for t in $(CROSS_AGENT:%=brine-agent/%) $(CROSS_BRINE:%=brine/%); do \
		name=$${t%%/*}; os=$$(echo $$t | cut -d/ -f2); arch=$${t##*/}; ext=""; [ $$os = windows ] && ext=.exe; \
		out=bin/cross/$$name-$$os-$$arch$$ext; echo "make cross: $$out"; \
		GOOS=$$os GOARCH=$$arch GOARM=7 $(GOBUILD) -o $$out ./cmd/$$name || failed="$$failed $$name-$$os-$$arch"; \
	done; \
	if [ -n "$$failed" ]; then echo "make cross: failed:$$failed" >&2; exit 1; fi

# sizes checks that bin/brine (≤ 70 MB) and bin/brine-agent (≤ 25 MB) stay
# small, static, stripped and stamped with their version, so that size
# cannot creep.
sizes: build
	GO="$(GO)" ./scripts/check-binaries.sh $(BIN) $(AGENT_BIN) $(VERSION)

# demo needs real peers: BIND 9 (and dig), dnsmasq, OpenSSH's sshd and ssh,
# iproute2 (network namespaces), busybox's udhcpc (a DHCP client), python3.
DEMO_PACKAGES := bind9 bind9-dnsutils dnsmasq-base openssh-server openssh-client iproute2 busybox udhcpc python3

demo:
	@echo "make demo: building $(BIN) (the first build downloads and compiles the Go modules: about 2 minutes on 2 cores; later builds take seconds)"
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEMO_PACKAGES)"
	./scripts/demo.sh $(BIN)

# test is the whole suite, as CI runs it: every test of every package,
# the system tests (e2e) and the chaos run's short profile included, each
# once: the concurrent packages (RACE_PKGS) under the race detector, the
# others without it. Nothing skips: a test that needs root, a network
# namespace or a Debian package fails, saying which, when it is missing.
test:
	$(call phase,test,Debian packages,1/8)
	@$(MAKE) --no-print-directory deps
	$(call phase,test,go vet,2/8)
	$(GO) vet ./...
	$(call phase,test,go test (the packages not raced),3/8)
	$(GO) test -count=1 $$($(GO) list ./... | grep -vxF "$$($(GO) list $(RACE_PKGS))")
	$(call phase,test,go test -race (the concurrent packages),4/8)
	$(GO) test -count=1 -race $(RACE_PKGS)
	$(call phase,test,third_party/gonja,5/8)
	cd third_party/gonja && $(GO) test -count=1 ./...
	$(call phase,test,static binaries and their sizes,6/8)
	@$(MAKE) --no-print-directory sizes
	$(call phase,test,the .deb installed end to end (make packages; scripts/packages-test.sh),7/8)
	@$(MAKE) --no-print-directory packages
	./scripts/packages-test.sh dist
	$(call phase,test,the Windows agent's tests under wine (make test-windows),8/8)
	@$(MAKE) --no-print-directory test-windows
	@echo "== make test: passed at $$(date -u +%H:%M:%S) UTC"

# test-windows runs the Windows agent's tests (GOOS=windows test binaries)
# under Debian's wine: cmd.exe and job objects, the registry grains, the
# Service Control Manager (wine's starts and stops the test binary as a
# service). scripts/wine-test.sh says what wine cannot run.
WINE_PACKAGES := wine wine64 binutils-mingw-w64-x86-64
test-windows:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(WINE_PACKAGES)"
	GO="$(GO)" ./scripts/wine-test.sh

# check is the edit-test loop: gofmt, go vet, staticcheck, and the tests
# of every package but the system tests and the chaos run, with -short
# (tests that need root or a network namespace skip under -short and only
# there). Go caches the results of tests whose code did not change.
check:
	$(call phase,check,gofmt go vet staticcheck,1/3)
	@$(MAKE) --no-print-directory lint
	$(call phase,check,go test -short (all but e2e and bench/chaos),2/3)
	$(GO) test -short $$($(GO) list ./... | grep -Ev '$(CHECK_SKIP)')
	$(call phase,check,third_party/gonja,3/3)
	cd third_party/gonja && $(GO) test -short ./...
	@echo "== make check: passed at $$(date -u +%H:%M:%S) UTC"

# Salt 3006.6 from ../shared/peers (or SALT_SRC=/path/to/salt-tree), run with
# Debian's python3 packages: make interop renders the differential suites
# (testdata/salt/*) with Salt and compares brine with it, live.
INTEROP_PACKAGES := python3 python3-zmq python3-msgpack python3-yaml python3-jinja2 python3-markupsafe python3-tornado \
	python3-pycryptodome python3-psutil python3-requests python3-distro python3-packaging python3-jmespath
interop:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(INTEROP_PACKAGES)"
	./scripts/interop.sh

# packages builds the .deb and .rpm of brine (master and CLI) and
# brine-agent into dist/ with nfpm (pinned in packaging/go.mod, apart from
# brine's module), from make build's static binaries: man pages and shell
# completion scripts come from the binaries' own gen-docs. A man page both
# binaries make (brine-agent.1: `brine agent`, and brine-agent itself) is
# brine-agent's, so that the two packages install side by side. Beside
# them, a tarball of the same files for machines without dpkg or rpm
# (docs/install.md).
# Both are worked out once, when packages first needs them (not at every
# make, and not again if a commit lands during the build).
PKG_VERSION ?= $(eval PKG_VERSION := $(shell packaging/version.sh))$(PKG_VERSION)
PKG_ARCH    ?= $(eval PKG_ARCH := $(shell go env GOARCH))$(PKG_ARCH)
packages: build
	@test -x bin/brine-agent || { echo "make packages: bin/brine-agent is missing (make build makes it)" >&2; exit 1; }
	rm -rf dist/docs dist/*.deb dist/*.rpm dist/*.tar.gz
	bin/brine gen-docs --man dist/docs/brine/man --completion dist/docs/brine/completion
	bin/brine-agent gen-docs --man dist/docs/brine-agent/man --completion dist/docs/brine-agent/completion
	for f in dist/docs/brine-agent/man/*.1; do rm -f dist/docs/brine/man/$$(basename $$f); done
	gzip -9n dist/docs/*/man/*.1
	cd packaging && $(GO) build -o ../dist/.nfpm github.com/goreleaser/nfpm/v2/cmd/nfpm
	for p in brine brine-agent; do for f in deb rpm; do \
		VERSION=$(PKG_VERSION) GOARCH=$(PKG_ARCH) dist/.nfpm pkg -f packaging/$$p.yaml -p $$f -t dist/ || exit 1; \
	done; done
	rm -rf dist/tar && t=dist/tar/brine-$(PKG_VERSION)-linux-$(PKG_ARCH) && mkdir -p $$t/bin $$t/etc && \
		cp bin/brine bin/brine-agent $$t/bin/ && cp -r packaging/systemd dist/docs/brine/man dist/docs/brine/completion $$t/ && \
		cp dist/docs/brine-agent/man/* $$t/man/ && cp dist/docs/brine-agent/completion/* $$t/completion/ && \
		cp examples/master packaging/minion $$t/etc/ && \
		tar -C dist/tar -czf dist/brine-$(PKG_VERSION)-linux-$(PKG_ARCH).tar.gz brine-$(PKG_VERSION)-linux-$(PKG_ARCH) && rm -rf dist/tar

# deps installs the Debian packages the tests need, only when one is missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: need root to install$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench: build
	mkdir -p bench/results
	$(GO) run ./bench/bus -out bench/results/bus.json
	$(GO) run ./bench/reactor -out bench/results/reactor.json
	$(GO) run ./bench/ddns -out bench/results/ddns.json
	$(GO) run ./bench/dnsmasq -out bench/results/dnsmasq.json
	$(GO) run ./bench/cloud -brine $(BIN) -out bench/results/cloud.json
	$(GO) run ./bench/api -out bench/results/api.json
	$(GO) run ./bench/slack -out bench/results/slack.json
	$(GO) run ./bench/agents -brine $(BIN) -out bench/results/agents.json
	$(GO) run ./bench/jobs -brine $(BIN) -out bench/results/jobs.json
	$(GO) run ./bench/states -brine $(BIN) -out bench/results/states.json
	$(GO) run ./bench/orchestrate -brine $(BIN) -out bench/results/orchestrate.json
	$(GO) run ./bench/beacons -brine $(BIN) -out bench/results/beacons.json
	$(GO) run ./bench/saltminions -brine $(BIN) -out bench/results/saltminions.json
	$(GO) run ./bench/saltside -brine $(BIN) -out bench/results/saltside.json
	$(GO) run ./bench/saltapi -brine $(BIN) -out bench/results/saltapi.json
	$(GO) run ./bench/cluster -out bench/results/cluster.json

# chaos runs the several-masters chaos suite for CHAOS_DURATION (faults every
# 15–30 s; CHAOS_SEED replays a schedule) and writes bench/results/chaos.json;
# a short profile of it runs in make test (bench/chaos TestChaosShort).
CHAOS_DURATION ?= 10m
CHAOS_SEED     ?= 0
chaos: build deps
	$(GO) run ./bench/chaos -brine $(BIN) -duration $(CHAOS_DURATION) -seed $(CHAOS_SEED) -out bench/results/chaos.json

# fuzz runs every fuzz target for FUZZTIME each; new corpus entries land in
# the Go cache (copy interesting ones to the package's testdata/fuzz/).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

clean:
	rm -rf bin
