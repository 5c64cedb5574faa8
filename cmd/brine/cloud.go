package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/brinehq/brine/bus/gateway"
	"github.com/brinehq/brine/cli/agentcmd"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/drivers"
	"github.com/brinehq/brine/cloud/vmware"
	"github.com/brinehq/brine/keys"
)

// cloudFlags are the flags of `brine cloud`, salt-cloud's where it has them.
type cloudFlags struct {
	client        clientFlags
	profile       string
	mapFile       string
	hard          bool
	destroy       bool
	yes           bool
	parallel      int
	listProviders bool
	listProfiles  bool
	listImages    string
	listSizes     string
	listLocations string
	query         bool
	asJSON        bool
	dryRun        bool
	verbose       bool
}

func newCloudCmd(g *globalFlags) *cobra.Command {
	f := &cloudFlags{}
	cmd := &cobra.Command{
		Use:   "cloud [-p PROFILE NAME… | -m MAP [-H] | -d NAME…]",
		Short: "Create and destroy VMs from salt-cloud profiles and maps, firing salt-cloud's events",
		Long: `Create and destroy VMs the way salt-cloud does, from the same files:
<config-dir>/cloud.providers, cloud.providers.d/*.conf, cloud.profiles,
cloud.profiles.d/*.conf, and map files. Each VM fires salt-cloud's events
through the master (salt/cloud/<name>/creating, requesting, querying,
waiting_for_ssh, deploying, deploy_script, created; destroying, destroyed;
<step>/failed with an
error), so reactions written for salt-cloud keep working. created and
destroyed also carry instance_id, ip_address, private_ips, public_ips and
macs. A master must be running: without one nothing is created.

VMs that exist already are reported, not created again, so an interrupted
run can simply be run again. Destroying asks for confirmation unless -y.
The exit status is 1 when any VM failed (salt-cloud exits 0).

After the VM has an address, the deploy step logs in over SSH (private_key
or password, each ssh_username in turn, host keys trusted on first use in
<data_dir>/known_hosts), uploads the profile's script (a path, or a name
in <config-dir>/cloud.deploy.d) and runs it with script_args and
script_env, firing deploying and deploy_script (with host). A profile with
no script skips it with a warning; deploy: False skips it silently.`,
		Example: `  brine cloud -p small web1 web2 web3
  brine cloud -m /srv/cloud/prod.map -P 20
  brine cloud -m /srv/cloud/prod.map -H --dry-run
  brine cloud -d web2 -y
  brine cloud -Q --json
  brine cloud --list-images my-vcenter
  brine cloud simulator        # a vCenter simulator to try all this on`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCloud(cmd.Context(), g, f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), parallelCount(os.Args[1:], args, f))
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.profile, "profile", "p", "", "create NAME… from this profile")
	fl.StringVarP(&f.mapFile, "map", "m", "", "create the VMs of this map file (with -d: destroy them)")
	fl.BoolVarP(&f.hard, "hard", "H", false, "with -m: also destroy the VMs of the map's providers that the map does not list")
	fl.BoolVarP(&f.destroy, "destroy", "d", false, "destroy the VMs named (or, with -m, those of the map)")
	fl.BoolVarP(&f.yes, "assume-yes", "y", false, "do not ask before destroying")
	fl.IntVarP(&f.parallel, "parallel", "P", cloud.DefaultParallel, "VMs worked on at once (a bare -P, salt-cloud's switch, means the default)")
	fl.Lookup("parallel").NoOptDefVal = strconv.Itoa(cloud.DefaultParallel)
	fl.BoolVar(&f.listProviders, "list-providers", false, "list the configured providers")
	fl.BoolVar(&f.listProfiles, "list-profiles", false, "list the configured profiles")
	fl.StringVar(&f.listImages, "list-images", "", "list the images (vSphere: templates) of PROVIDER, or all")
	fl.StringVar(&f.listSizes, "list-sizes", "", "list the sizes of PROVIDER, or all")
	fl.StringVar(&f.listLocations, "list-locations", "", "list the locations of PROVIDER, or all")
	fl.BoolVarP(&f.query, "query", "Q", false, "list every provider's VMs with state and IPs")
	fl.BoolVar(&f.asJSON, "json", false, "print results as JSON")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be created and destroyed, and do nothing")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show the output of deploy scripts, each line prefixed with the VM's name")
	f.client.register(cmd)
	cmd.AddCommand(newCloudSimulatorCmd())
	return cmd
}

// parallelCount reconciles salt-cloud's -P, a switch there ("build in
// parallel"), with brine's count: the flag takes a bare -P as the default
// count, which leaves the N of `-P N` among the arguments; found right
// after -P in the command line raw, it is taken back as the count.
func parallelCount(raw, args []string, f *cloudFlags) []string {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] != "-P" && raw[i] != "--parallel" {
			continue
		}
		n, err := strconv.Atoi(raw[i+1])
		if err != nil {
			continue
		}
		if j := slices.Index(args, raw[i+1]); j >= 0 {
			f.parallel = n
			return slices.Delete(slices.Clone(args), j, j+1)
		}
	}
	return args
}

func runCloud(ctx context.Context, g *globalFlags, f *cloudFlags, in io.Reader, out, errOut io.Writer, args []string) error {
	modes := 0
	for _, on := range []bool{f.profile != "", f.mapFile != "", f.destroy && f.mapFile == "", f.listProviders, f.listProfiles,
		f.listImages != "", f.listSizes != "", f.listLocations != "", f.query} {
		if on {
			modes++
		}
	}
	switch {
	case modes == 0:
		return usageError{errors.New("cloud: give -p PROFILE NAME…, -m MAP, -d NAME…, -Q or a --list-… flag")}
	case modes > 1:
		return usageError{errors.New("cloud: give only one of -p, -m, -d, -Q and the --list-… flags")}
	case f.profile != "" && len(args) == 0:
		return usageError{errors.New("cloud: -p PROFILE needs at least one NAME")}
	case f.destroy && f.mapFile == "" && len(args) == 0:
		return usageError{errors.New("cloud: -d needs at least one NAME")}
	case (f.profile == "" && !f.destroy || f.mapFile != "") && len(args) > 0:
		return usageError{fmt.Errorf("cloud: unexpected arguments %q", args)}
	case f.hard && f.mapFile == "":
		return usageError{errors.New("cloud: -H only goes with -m MAP")}
	case f.parallel < 1:
		return usageError{errors.New("cloud: --parallel must be at least 1")}
	}
	cfg, err := cloud.LoadConfig(cloud.ConfigDir(g.ConfigDir))
	if err != nil {
		return err
	}
	switch {
	case f.listProviders:
		return printProviders(out, cfg, f.asJSON)
	case f.listProfiles:
		return printProfiles(out, cfg, f.asJSON)
	}
	// Listing and planning need no master; firing events does, so a run
	// checks for one before anything else.
	var pub cloud.Publisher = discardPublisher{}
	var client *gateway.Client
	mutates := !f.dryRun && (f.profile != "" || f.mapFile != "" || f.destroy)
	if mutates {
		if client, err = dialMaster(ctx, g, &f.client); err != nil {
			return err
		}
		defer client.Close()
		pub = timedPublisher{client: client, timeout: f.client.timeout}
	}
	prog := newProgress(errOut)
	opts := []cloud.Option{cloud.WithObserver(prog)}
	if mutates {
		d, log, err := newCloudDeployer(g, f.verbose, errOut)
		if err != nil {
			return err
		}
		opts = append(opts, cloud.WithDeployer(d), cloud.WithLogger(log), cloud.WithKeys(masterKeys{client: client, timeout: f.client.timeout}))
	}
	c := cloud.New(cfg, drivers.Openers, pub, opts...)
	defer c.Close()
	switch {
	case f.listImages != "":
		return listResources(ctx, out, c, f.listImages, "images", cloud.Driver.Images, f.asJSON)
	case f.listSizes != "":
		return listResources(ctx, out, c, f.listSizes, "sizes", cloud.Driver.Sizes, f.asJSON)
	case f.listLocations != "":
		return listResources(ctx, out, c, f.listLocations, "locations", cloud.Driver.Locations, f.asJSON)
	case f.query:
		return queryNodes(ctx, out, c, f.asJSON)
	}
	req := f.command(args)
	plan, err := c.PlanCommand(ctx, req)
	if err != nil {
		return err
	}
	if f.dryRun {
		return printPlan(out, plan, f.asJSON)
	}
	if len(plan.Destroy) > 0 && !f.yes {
		if err := confirmDestroy(in, errOut, plan); err != nil {
			return err
		}
	}
	fun, kwargs := req.Job()
	job, err := beginJob(ctx, client, fun, nil, kwargs)
	if err != nil {
		return fmt.Errorf("cloud: announcing the run as a job: %w", err)
	}
	prog.start()
	results := c.Run(ctx, plan, f.parallel)
	prog.stop()
	outcomes, runErr := cloud.Outcomes(results)
	if ctx.Err() != nil {
		runErr = fmt.Errorf("interrupted: %w", ctx.Err())
	}
	// The job's ret is stored even when the run was interrupted.
	if err := endJob(context.WithoutCancel(ctx), client, job, outcomes, runErr); err != nil {
		fmt.Fprintf(errOut, "brine: cloud: recording the job's result: %v\n", err)
	}
	return printResults(out, paletteFor(out, f.asJSON), results, f.asJSON, ctx.Err() != nil)
}

// command is the run the flags and arguments ask for.
func (f *cloudFlags) command(names []string) cloud.Command {
	return cloud.Command{Profile: f.profile, MapFile: f.mapFile, Hard: f.hard, Destroy: f.destroy, Names: names, Parallel: f.parallel}
}

// dialMaster connects to the master that will store the events.
func dialMaster(ctx context.Context, g *globalFlags, cf *clientFlags) (*gateway.Client, error) {
	reqAddr, _, key, err := cf.endpoints(g)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, cf.timeout)
	defer cancel()
	client, err := cf.dial(dctx, reqAddr, key)
	if err != nil {
		var ue unreachableError
		if errors.As(err, &ue) {
			return nil, unreachableError{fmt.Errorf("%w; no VM was created or destroyed (events need a running master: brine master)", err)}
		}
		return nil, err
	}
	return client, nil
}

// timedPublisher bounds each publish by the client timeout, so that a
// master gone mid-run fails the VM's step instead of hanging it.
type timedPublisher struct {
	client  *gateway.Client
	timeout time.Duration
}

func (p timedPublisher) Publish(ctx context.Context, tag string, data map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return p.client.Publish(ctx, tag, data)
}

// masterKeys deletes destroyed VMs' agent keys on the master, through
// the connection the lifecycle's events go over.
type masterKeys struct {
	client  *gateway.Client
	timeout time.Duration
}

func (k masterKeys) DeleteKey(ctx context.Context, id string) error {
	sel, err := keys.Everywhere(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	var deleted keys.Listing
	return runFunction(ctx, k.client.Call, "key.delete_dict", map[string]any{"match": sel}, &deleted)
}

// discardPublisher is used by commands that fire nothing (listings, plans).
type discardPublisher struct{}

func (discardPublisher) Publish(context.Context, string, map[string]any) (string, error) {
	return "", errors.New("this command fires no events")
}

func confirmDestroy(in io.Reader, errOut io.Writer, plan *cloud.Plan) error {
	fmt.Fprintln(errOut, "These VMs will be destroyed:")
	for _, n := range plan.Destroy {
		fmt.Fprintf(errOut, "  %s (%s:%s %s)\n", n.Name, n.Provider, n.Driver, n.ID)
	}
	if !agentcmd.IsTerminal(in) {
		return usageError{errors.New("cloud: destroying needs confirmation: add -y (stdin is not a terminal)")}
	}
	fmt.Fprint(errOut, "Proceed? [y/N] ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		return errors.New("cloud: nothing done")
	}
	return nil
}

// providerAliases resolves a --list-… argument: an alias or "all".
func providerAliases(cfg *cloud.Config, arg string) ([]string, error) {
	if arg == "all" {
		return cfg.ProviderNames(), nil
	}
	if _, ok := cfg.Providers[arg]; !ok {
		return nil, usageError{fmt.Errorf("cloud: unknown provider %q (known: %s)", arg, strings.Join(cfg.ProviderNames(), ", "))}
	}
	return []string{arg}, nil
}

func listResources(ctx context.Context, out io.Writer, c *cloud.Cloud, arg, what string, list func(cloud.Driver, context.Context) ([]cloud.Resource, error), asJSON bool) error {
	aliases, err := providerAliases(c.Config(), arg)
	if err != nil {
		return err
	}
	all := map[string][]cloud.Resource{}
	for _, alias := range aliases {
		d, err := c.Driver(ctx, alias)
		if err != nil {
			return err
		}
		rs, err := list(d, ctx)
		if err != nil {
			return fmt.Errorf("provider %s: %s: %w", alias, what, err)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
		all[alias] = rs
	}
	if asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	w := &errWriter{w: tw}
	w.printf("PROVIDER\tNAME\tID\tDETAILS\n")
	for _, alias := range aliases {
		for _, r := range all[alias] {
			w.printf("%s\t%s\t%s\t%s\n", alias, r.Name, r.ID, details(r.Details))
		}
	}
	if w.err != nil {
		return w.err
	}
	return tw.Flush()
}

func details(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func queryNodes(ctx context.Context, out io.Writer, c *cloud.Cloud, asJSON bool) error {
	var nodes []*cloud.Node
	for _, alias := range c.Config().ProviderNames() {
		d, err := c.Driver(ctx, alias)
		if err != nil {
			return err
		}
		ns, err := d.Nodes(ctx)
		if err != nil {
			return fmt.Errorf("provider %s: %w", alias, err)
		}
		for _, n := range ns {
			n.Provider, n.Driver = alias, c.Config().Providers[alias].Driver
		}
		nodes = append(nodes, ns...)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if asJSON {
		return printJSONList(out, nodes)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	w := &errWriter{w: tw}
	w.printf("NAME\tSTATE\tPRIVATE IPS\tPUBLIC IPS\tMACS\tPROVIDER\tID\tPROFILE\n")
	for _, n := range nodes {
		w.printf("%s\t%s\t%s\t%s\t%s\t%s:%s\t%s\t%s\n", n.Name, n.State, strings.Join(n.PrivateIPs, ","), strings.Join(n.PublicIPs, ","),
			strings.Join(n.MACs, ","), n.Provider, n.Driver, n.ID, n.Profile)
	}
	if w.err != nil {
		return w.err
	}
	return tw.Flush()
}

func printProviders(out io.Writer, cfg *cloud.Config, asJSON bool) error {
	type prov struct {
		Driver   string         `json:"driver"`
		File     string         `json:"file"`
		Line     int            `json:"line"`
		Settings map[string]any `json:"settings"`
	}
	all := map[string]prov{}
	for _, alias := range cfg.ProviderNames() {
		p := cfg.Providers[alias]
		s, err := p.Settings.Plain(cloud.IsSecretKey)
		if err != nil {
			return err
		}
		all[alias] = prov{Driver: p.Driver, File: p.File, Line: p.Line, Settings: s}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	w := &errWriter{w: out}
	for _, alias := range cfg.ProviderNames() {
		p := all[alias]
		w.printf("%s:%s\t(%s:%d)\n", alias, p.Driver, p.File, p.Line)
	}
	return w.err
}

func printProfiles(out io.Writer, cfg *cloud.Config, asJSON bool) error {
	type prof struct {
		Provider string `json:"provider"`
		Driver   string `json:"driver"`
		File     string `json:"file"`
		Line     int    `json:"line"`
	}
	all := map[string]prof{}
	for _, name := range cfg.ProfileNames() {
		p := cfg.Profiles[name]
		all[name] = prof{Provider: p.Provider, Driver: cfg.Providers[p.Provider].Driver, File: p.File, Line: p.Line}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	w := &errWriter{w: out}
	for _, name := range cfg.ProfileNames() {
		p := all[name]
		w.printf("%s\t%s:%s\t(%s:%d)\n", name, p.Provider, p.Driver, p.File, p.Line)
	}
	return w.err
}

// planJSON is `--dry-run --json`.
type planJSON struct {
	Create  []planCreate  `json:"create"`
	Exists  []*cloud.Node `json:"exists"`
	Destroy []*cloud.Node `json:"destroy"`
	Absent  []string      `json:"absent"`
}

type planCreate struct {
	Name     string         `json:"name"`
	Profile  string         `json:"profile"`
	Provider string         `json:"provider"`
	Location string         `json:"location"`
	Kwargs   map[string]any `json:"kwargs"`
	Warnings []string       `json:"warnings,omitempty"`
}

func printPlan(out io.Writer, p *cloud.Plan, asJSON bool) error {
	pj := planJSON{Create: []planCreate{}, Exists: []*cloud.Node{}, Destroy: p.Destroy, Absent: p.Absent}
	for _, r := range p.Create {
		pj.Create = append(pj.Create, planCreate{Name: r.VM.Name, Profile: r.VM.Profile.Name, Provider: r.VM.ProviderDriver(), Location: r.Location, Kwargs: r.Kwargs, Warnings: r.Warnings})
	}
	for _, r := range p.Exists {
		pj.Exists = append(pj.Exists, r.Node)
	}
	if pj.Destroy == nil {
		pj.Destroy = []*cloud.Node{}
	}
	if pj.Absent == nil {
		pj.Absent = []string{}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(pj)
	}
	w := &errWriter{w: out}
	for _, c := range pj.Create {
		w.printf("create  %s  (profile %s on %s, %s)\n", c.Name, c.Profile, c.Provider, c.Location)
		for _, warn := range c.Warnings {
			w.printf("        warning: %s\n", warn)
		}
	}
	for _, n := range pj.Exists {
		w.printf("exists  %s  (%s:%s %s)\n", n.Name, n.Provider, n.Driver, n.ID)
	}
	for _, n := range pj.Destroy {
		w.printf("destroy %s  (%s:%s %s)\n", n.Name, n.Provider, n.Driver, n.ID)
	}
	for _, name := range pj.Absent {
		w.printf("absent  %s  (no provider has it)\n", name)
	}
	if len(pj.Create)+len(pj.Destroy) == 0 {
		w.printf("nothing to do\n")
	}
	return w.err
}

// resultsJSON is the `--json` output of a run.
type resultsJSON struct {
	Results   []cloud.Result `json:"results"`
	Failed    int            `json:"failed"`
	Cancelled bool           `json:"cancelled,omitempty"`
}

// printResults prints the outcome; any failure makes the command fail.
func printResults(out io.Writer, pal palette, results []cloud.Result, asJSON, cancelled bool) error {
	failed := 0
	for _, r := range results {
		if r.Status == cloud.Failed {
			failed++
		}
	}
	if asJSON {
		if err := json.NewEncoder(out).Encode(resultsJSON{Results: results, Failed: failed, Cancelled: cancelled}); err != nil {
			return err
		}
	} else {
		t := newTable(pal, "NAME", "ACTION", "STATUS", "PROVIDER", "ID", "IP", "MACS", "ELAPSED", "NOTE")
		t.color("STATUS", statusHue)
		for _, r := range results {
			id, ip, macs := "", "", ""
			if r.Node != nil {
				id, ip, macs = r.Node.ID, r.Node.IP(), strings.Join(r.Node.MACs, ",")
			}
			note := strings.Join(r.Warnings, "; ")
			if r.Status == cloud.Failed {
				note = fmt.Sprintf("at %s: %s", r.Step, r.Error)
				if r.Exists {
					note += " (the VM exists)"
				}
			}
			t.row(r.Name, r.Action, string(r.Status), r.Provider, id, ip, macs, r.Elapsed.Round(time.Millisecond).String(), note)
		}
		if err := t.write(out); err != nil {
			return err
		}
	}
	switch {
	case cancelled:
		return fmt.Errorf("cloud: interrupted; %d of %d VMs did not finish (see the list for what exists)", failed, len(results))
	case failed > 0:
		return fmt.Errorf("cloud: %d of %d VMs failed", failed, len(results))
	}
	return nil
}

// progress shows one line per VM with its lifecycle step and elapsed
// time: redrawn in place on a terminal, as plain lines otherwise.
type progress struct {
	w   io.Writer
	tty bool
	pal palette

	mu       sync.Mutex
	active   []*vmLine
	byName   map[string]*vmLine
	finished []string // lines to print once, above the live block
	drawn    int
	total    int
	done     int
	failed   int
	quit     chan struct{}
	wg       sync.WaitGroup
}

type vmLine struct {
	name  string
	step  string
	start time.Time
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: agentcmd.IsTerminal(w), pal: paletteFor(w, false), byName: map[string]*vmLine{}}
}

// Step implements cloud.Observer.
func (p *progress) Step(name, step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.byName[name]
	if !ok {
		l = &vmLine{name: name, start: time.Now()}
		p.byName[name] = l
		p.active = append(p.active, l)
		p.total++
	}
	l.step = step
	// The last steps, created and destroyed, are what Done reports: a
	// plain line for them would say it twice.
	if !p.tty && step != string(cloud.Created) && step != string(cloud.Destroyed) {
		fmt.Fprintf(p.w, "%s: %s (%s)\n", name, step, time.Since(l.start).Round(100*time.Millisecond))
	}
}

// Done implements cloud.Observer.
func (p *progress) Done(r cloud.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.byName[r.Name]; ok {
		delete(p.byName, r.Name)
		for i, a := range p.active {
			if a == l {
				p.active = append(p.active[:i], p.active[i+1:]...)
				break
			}
		}
	} else {
		p.total++
	}
	p.done++
	msg := fmt.Sprintf("%s: %s (%s)", r.Name, p.pal.paint(statusHue(string(r.Status)), string(r.Status)), r.Elapsed.Round(100*time.Millisecond))
	if r.Status == cloud.Failed {
		p.failed++
		msg = fmt.Sprintf("%s: %s at %s: %s", r.Name, p.pal.paint(red, "failed"), r.Step, r.Error)
	}
	for _, w := range r.Warnings {
		msg += "; " + w
	}
	if p.tty {
		p.finished = append(p.finished, msg)
		return
	}
	fmt.Fprintln(p.w, msg)
}

func (p *progress) start() {
	if !p.tty {
		return
	}
	p.quit = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				p.draw(true)
				return
			case <-t.C:
				p.draw(false)
			}
		}
	}()
}

func (p *progress) stop() {
	if p.quit != nil {
		close(p.quit)
		p.wg.Wait()
	}
}

// draw replaces the live block: finished lines scroll up above it, active
// VMs (at most --parallel of them) and a summary stay at the bottom.
func (p *progress) draw(final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", p.drawn)
	}
	for _, m := range p.finished {
		b.WriteString(m + "\n")
	}
	p.finished = nil
	p.drawn = 0
	if !final {
		for _, l := range p.active {
			fmt.Fprintf(&b, "  %-24s %-18s %s\n", l.name, l.step, time.Since(l.start).Round(100*time.Millisecond))
			p.drawn++
		}
		fmt.Fprintf(&b, "  %d/%d done, %d failed\n", p.done, p.total, p.failed)
		p.drawn++
	}
	_, _ = io.WriteString(p.w, b.String())
}

func newCloudSimulatorCmd() *cobra.Command {
	var (
		listen, user, password, dhcpStart, onPowerOff string
		noDHCP, asJSON                                bool
	)
	cmd := &cobra.Command{
		Use:   "simulator",
		Short: "Run a vCenter simulator (govmomi's) to try brine cloud without a vCenter",
		Long: `Run govmomi's vCenter simulator: datacenter DC0, cluster DC0_C0, a few VMs and
a template called linux-template, over HTTPS with a self-signed certificate.
Powered-on VMs get an address from 10.20.0.0/16 (from --dhcp-start on) and a
MAC address of their own, as a DHCP server and vCenter would give them. With
a loopback --dhcp-start, an sshd on this host can play the VMs' guests for
the deploy step; --on-power-off stops such a guest with its VM (brine cloud
-d powers a VM off before deleting it), as make demo does. It prints the
provider entry to put in cloud.providers and runs until interrupted;
everything in it is lost when it stops.`,
		Example: `  brine cloud simulator --listen 127.0.0.1:8989 &
  brine cloud -p small web1 web2 web3
  brine cloud simulator --dhcp-start 127.20.0.10   # VMs on loopback addresses`,
		Args: rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			start, err := netip.ParseAddr(dhcpStart)
			if err != nil {
				return usageError{fmt.Errorf("--dhcp-start: %w", err)}
			}
			cfg := vmware.SimulatorConfig{Listen: listen, User: user, Password: password, DHCP: !noDHCP, DHCPStart: start}
			if onPowerOff != "" {
				cfg.PowerOff = vmware.PowerOffProgram(cmd.Context(), onPowerOff, cmd.ErrOrStderr())
			}
			sim, err := vmware.StartSimulator(cfg)
			if err != nil {
				return err
			}
			defer sim.Close()
			u := sim.URL()
			u.User = nil
			out := cmd.OutOrStdout()
			if asJSON {
				err = json.NewEncoder(out).Encode(map[string]string{"url": u.String(), "user": user, "template": vmware.SimulatorTemplate})
			} else {
				_, err = fmt.Fprintf(out, `# vCenter simulator at %s (template %s). Provider entry for cloud.providers:
vcsim:
  driver: vmware
  url: %s
  user: %s
  password: %s
  verify_ssl: False
`, u, vmware.SimulatorTemplate, u, user, password)
			}
			if err != nil {
				return err
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8989", "address to serve on")
	cmd.Flags().StringVar(&user, "user", "user", "the user name accepted")
	cmd.Flags().StringVar(&password, "password", "pass", "the password accepted")
	cmd.Flags().StringVar(&dhcpStart, "dhcp-start", "10.20.0.10", "the first address VMs get")
	cmd.Flags().StringVar(&onPowerOff, "on-power-off", "", "a program run, and waited for, with a VM's name as its argument as the VM powers off")
	cmd.Flags().BoolVar(&noDHCP, "no-dhcp", false, "give VMs no IP address (to see wait_for_ip_timeout at work)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"url", "user", "template"} instead of a provider entry`)
	return cmd
}
