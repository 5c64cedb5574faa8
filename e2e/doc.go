// Package e2e holds brine's system tests: each builds the brine binary
// (../cmd/brine, once, in TestMain) and runs it as a user would, as real
// `brine master` and `brine agent` processes talking over loopback, with
// real peers where the feature has one (BIND, dnsmasq, OpenSSH's sshd, a
// vCenter simulator, network namespaces as guests, SaltGUI in headless
// chromium). They cover remote execution, states, orchestration, the
// mine, beacons, reactions, the HTTP API, salt-api, Slack, cloud runs
// with their deploy step, keys, failover between masters and a master
// cluster, hostile agents, masterless salt-call, the exit statuses of a
// client without a master, shell completion, and `make demo`'s scenario
// (TestDemoScenario).
//
// Unit tests of the command's own flag parsing and printing stay beside
// it in cmd/brine; these tests see brine only from outside, through its
// arguments, output, exit status and the master's protocol.
//
// Run them with `make test` (which first installs the Debian packages they
// start as peers) or, for one test, `go test ./e2e -run TestMasterCluster`.
// Several (network namespaces, sshd, the demo) need root and fail, never
// skip, without it; `make check` leaves this package out.
package e2e
