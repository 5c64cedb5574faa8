package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultParallel is how many VMs are worked on at once.
const DefaultParallel = 10

// eventTimeout bounds the publishing of a failure event after the run was
// cancelled, so that Ctrl-C still reports what happened.
const eventTimeout = 10 * time.Second

// Publisher fires an event durably and returns its id. A gateway.Client
// (through the master) and BusPublisher (on the bus directly) are
// Publishers.
type Publisher interface {
	Publish(ctx context.Context, tag string, data map[string]any) (string, error)
}

// SSHHost is the address the deploy step connects to, which
// waiting_for_ssh announces: the first of the node's public_ips or
// private_ips as ssh_interface says, else its first public address, else
// its first private one.
func SSHHost(vm *VM, node *Node) string {
	var iface string
	if vm.Settings.Decode("ssh_interface", &iface) == nil {
		switch {
		case iface == "public_ips" && len(node.PublicIPs) > 0:
			return node.PublicIPs[0]
		case iface == "private_ips" && len(node.PrivateIPs) > 0:
			return node.PrivateIPs[0]
		}
	}
	return node.IP()
}

// ErrDeploySkipped is returned by a Deployer that has nothing to run for
// a VM (its profile names no script); the lifecycle reports it as a
// warning and goes on to created.
var ErrDeploySkipped = errors.New("deploy skipped")

// Deployer bootstraps a created node (wait for SSH, run the profile's
// script). It fires its own events (deploying, deploy_script) with fire,
// which prefixes salt/cloud/<name>/.
type Deployer interface {
	Deploy(ctx context.Context, vm *VM, node *Node, fire func(ctx context.Context, task string, data map[string]any) error) error
}

// Forgetter is a Deployer that drops what it trusted about a node (its SSH
// host keys) once the node is destroyed, so that a VM made again at the
// same address is not refused as an impostor.
type Forgetter interface {
	Forget(ctx context.Context, node *Node) error
}

// KeyDeleter deletes the agent key of a destroyed VM, as salt-cloud -d
// removes the minion's key from the master: the agent that ran there can
// no longer act under that id, a machine made later under the name starts
// pending, and the key's mine record (its DNS and DHCP entries) goes too.
type KeyDeleter interface {
	DeleteKey(ctx context.Context, id string) error
}

// Observer is told of each VM's progress, for live display. Calls come
// from many goroutines.
type Observer interface {
	// Step reports that the VM called name entered step (an event task
	// name such as "requesting", or "waiting for ip").
	Step(name, step string)
	// Done reports the VM's outcome.
	Done(r Result)
}

// Status is the outcome of one VM's action.
type Status string

// Outcomes of Run.
const (
	Created   Status = "created"
	Exists    Status = "exists" // not created: a node of that name was there
	Destroyed Status = "destroyed"
	Absent    Status = "absent" // not destroyed: no node of that name
	Failed    Status = "failed"
)

// Result is what happened to one VM.
type Result struct {
	Name     string        `json:"name"`
	Action   string        `json:"action"` // create or destroy
	Profile  string        `json:"profile,omitempty"`
	Provider string        `json:"provider"`
	Status   Status        `json:"status"`
	Step     string        `json:"step,omitempty"` // where it failed
	Error    string        `json:"error,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	Node     *Node         `json:"node,omitempty"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	// Exists says whether the node exists after a failure (Ctrl-C or an
	// error after the request): what an operator must clean up or re-run.
	Exists bool  `json:"exists,omitempty"`
	Err    error `json:"-"`
}

// Outcomes is a run's results as a job returns them, by VM name: the
// action, its status and provider; the instance's id, address and MACs
// when there is one; the error and the step it failed at. The error names
// each VM that failed and why. `brine cloud` (salt-cloud) and the cloud.*
// functions (runner and reactions) return the same.
func Outcomes(results []Result) (map[string]any, error) {
	out := make(map[string]any, len(results))
	var failed []string
	for _, r := range results {
		o := map[string]any{"action": r.Action, "status": string(r.Status), "provider": r.Provider}
		if r.Node != nil {
			o["instance_id"], o["ip_address"], o["macs"] = r.Node.ID, r.Node.IP(), nonNil(r.Node.MACs)
		}
		if r.Status == Failed {
			o["error"], o["step"] = r.Error, r.Step
			failed = append(failed, r.Name+": "+r.Error)
		}
		out[r.Name] = o
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%d of %d VMs failed: %s", len(failed), len(results), strings.Join(failed, "; "))
	}
	return out, nil
}

// Cloud runs VM lifecycles against the configured providers.
type Cloud struct {
	cfg     *Config
	openers map[string]Opener
	pub     Publisher
	log     *slog.Logger
	deploy  Deployer
	keys    KeyDeleter
	obs     Observer

	mu      sync.Mutex
	drivers map[string]Driver
}

// Option configures a Cloud.
type Option func(*Cloud)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *Cloud) { c.log = l } }

// WithDeployer sets the deploy step; without one, profiles with deploy:
// True skip it with a warning.
func WithDeployer(d Deployer) Option { return func(c *Cloud) { c.deploy = d } }

// WithKeys sets who deletes a destroyed VM's agent key; without one,
// keys are left as they are.
func WithKeys(k KeyDeleter) Option { return func(c *Cloud) { c.keys = k } }

// WithObserver sets who is told of progress.
func WithObserver(o Observer) Option { return func(c *Cloud) { c.obs = o } }

// New returns a Cloud for cfg. openers maps driver names ("vmware", "ec2")
// to their Opener; events go to pub.
func New(cfg *Config, openers map[string]Opener, pub Publisher, opts ...Option) *Cloud {
	c := &Cloud{cfg: cfg, openers: openers, pub: pub, drivers: map[string]Driver{},
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Config returns the configuration the Cloud runs with.
func (c *Cloud) Config() *Config { return c.cfg }

// Driver returns the connected driver of a provider alias, opening it on
// first use.
func (c *Cloud) Driver(ctx context.Context, alias string) (Driver, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.drivers[alias]; ok {
		return d, nil
	}
	p, ok := c.cfg.Providers[alias]
	if !ok {
		return nil, fmt.Errorf("%w: unknown provider %q (known: %s)", ErrConfig, alias, strings.Join(c.cfg.ProviderNames(), ", "))
	}
	open, ok := c.openers[p.Driver]
	if !ok {
		return nil, fmt.Errorf("%w: %s:%d: provider %s: unknown driver %q", ErrConfig, p.File, p.Line, alias, p.Driver)
	}
	d, err := open(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", alias, err)
	}
	c.drivers[alias] = d
	return d, nil
}

// Close closes every driver opened.
func (c *Cloud) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, d := range c.drivers {
		errs = append(errs, d.Close())
	}
	c.drivers = map[string]Driver{}
	return errors.Join(errs...)
}

// Plan is what a run will do: it is computed (and every VM's settings
// checked) before anything is created or destroyed.
type Plan struct {
	// Create are the VMs to create, prepared.
	Create []*Request
	// Exists are the nodes asked for that exist already.
	Exists []Result
	// Destroy are the nodes to destroy.
	Destroy []*Node
	// Absent are names asked to be destroyed that no provider has.
	Absent []string
}

// PlanProfile plans creating names from profile.
func (c *Cloud) PlanProfile(ctx context.Context, profile string, names []string) (*Plan, error) {
	m := &Map{}
	for _, n := range names {
		m.Entries = append(m.Entries, MapEntry{Name: n, Profile: profile})
	}
	return c.PlanMap(ctx, m, false)
}

// PlanMap plans creating the VMs of m that do not exist; with hard, it also
// plans destroying the nodes of m's providers that m does not list (never
// the images or templates m's profiles clone from).
func (c *Cloud) PlanMap(ctx context.Context, m *Map, hard bool) (*Plan, error) {
	p := &Plan{}
	listed := map[string]bool{}
	sources := map[string]bool{}
	existing := map[string]map[string]*Node{} // alias -> name -> node
	for _, e := range m.Entries {
		vm, err := c.cfg.NewVM(e.Name, e.Profile, e.Overrides)
		if err != nil {
			if m.File != "" {
				return nil, fmt.Errorf("%s:%d: %w", m.File, e.Line, err)
			}
			return nil, err
		}
		alias := vm.Provider.Alias
		d, err := c.Driver(ctx, alias)
		if err != nil {
			return nil, err
		}
		if _, err := filterEvent(vm, "creating", nil); err != nil {
			return nil, err
		}
		req, err := d.Prepare(ctx, vm)
		if err != nil {
			return nil, fmt.Errorf("VM %s: %w", e.Name, err)
		}
		listed[e.Name] = true
		sources[req.Source] = true
		if existing[alias] == nil {
			if existing[alias], err = c.nodesByName(ctx, alias); err != nil {
				return nil, err
			}
		}
		if node, ok := existing[alias][e.Name]; ok {
			p.Exists = append(p.Exists, Result{Name: e.Name, Action: "create", Profile: e.Profile,
				Provider: vm.ProviderDriver(), Status: Exists, Node: node, Exists: true})
			continue
		}
		p.Create = append(p.Create, req)
	}
	if hard {
		for _, alias := range sortedKeys(existing) {
			for _, name := range sortedKeys(existing[alias]) {
				if !listed[name] && !sources[name] {
					p.Destroy = append(p.Destroy, existing[alias][name])
				}
			}
		}
	}
	return p, nil
}

// nodesByName lists a provider's nodes, one listing for a whole plan.
func (c *Cloud) nodesByName(ctx context.Context, alias string) (map[string]*Node, error) {
	d, err := c.Driver(ctx, alias)
	if err != nil {
		return nil, err
	}
	nodes, err := d.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", alias, err)
	}
	out := make(map[string]*Node, len(nodes))
	for _, n := range nodes {
		c.fill(n, c.cfg.Providers[alias])
		out[n.Name] = n
	}
	return out, nil
}

// PlanDestroy plans destroying names, looking for each on every provider
// (as salt-cloud -d does). Names found nowhere are listed in Absent.
func (c *Cloud) PlanDestroy(ctx context.Context, names []string) (*Plan, error) {
	p := &Plan{}
	found := map[string]bool{}
	for _, alias := range c.cfg.ProviderNames() {
		nodes, err := c.nodesByName(ctx, alias)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if n, ok := nodes[name]; ok {
				p.Destroy = append(p.Destroy, n)
				found[name] = true
			}
		}
	}
	for _, name := range names {
		if !found[name] {
			p.Absent = append(p.Absent, name)
		}
	}
	return p, nil
}

// PlanMapDestroy plans destroying every VM m lists (salt-cloud -m MAP -d).
func (c *Cloud) PlanMapDestroy(ctx context.Context, m *Map) (*Plan, error) {
	names := make([]string, 0, len(m.Entries))
	for _, e := range m.Entries {
		names = append(names, e.Name)
	}
	return c.PlanDestroy(ctx, names)
}

func (c *Cloud) fill(n *Node, p *Provider) {
	n.Provider, n.Driver = p.Alias, p.Driver
}

// Run carries out plan, parallel VMs at a time (DefaultParallel when < 1),
// and returns one result per VM, sorted by name: existing and absent ones
// included. A cancelled ctx stops what is under way; the results then say
// which nodes exist.
func (c *Cloud) Run(ctx context.Context, plan *Plan, parallel int) []Result {
	if parallel < 1 {
		parallel = DefaultParallel
	}
	results := make([]Result, 0, len(plan.Create)+len(plan.Destroy)+len(plan.Exists)+len(plan.Absent))
	var mu sync.Mutex
	add := func(r Result) {
		if c.obs != nil {
			c.obs.Done(r)
		}
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	}
	for _, r := range plan.Exists {
		add(r)
	}
	for _, name := range plan.Absent {
		add(Result{Name: name, Action: "destroy", Status: Absent})
	}
	// VMs start in plan order, parallel at a time; once ctx ends the rest
	// are reported as not started.
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, req := range plan.Create {
		if !acquire(ctx, sem) {
			add(c.notStarted(req.VM.Name, "create", req.VM.Profile.Name, req.VM.ProviderDriver(), ctx.Err()))
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			add(c.create(ctx, req))
		}()
	}
	for _, n := range plan.Destroy {
		if !acquire(ctx, sem) {
			r := c.notStarted(n.Name, "destroy", n.Profile, n.Provider+":"+n.Driver, ctx.Err())
			r.Exists, r.Node = true, n
			add(r)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			add(c.destroy(ctx, n))
		}()
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	return results
}

// acquire takes a slot of sem unless ctx ends first.
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		if ctx.Err() != nil {
			<-sem
			return false
		}
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Cloud) notStarted(name, action, profile, provider string, err error) Result {
	return Result{Name: name, Action: action, Profile: profile, Provider: provider, Status: Failed,
		Step: "not started", Error: err.Error(), Err: err}
}

// fire publishes salt/cloud/<name>/<task> with the event string and data.
func (c *Cloud) fire(ctx context.Context, name, task, event string, data map[string]any) error {
	payload := make(map[string]any, len(data)+1)
	for k, v := range data {
		payload[k] = v
	}
	if event != "" {
		payload["event"] = event
	}
	tag := "salt/cloud/" + name + "/" + task
	if _, err := c.pub.Publish(ctx, tag, payload); err != nil {
		return fmt.Errorf("firing %s: %w", tag, err)
	}
	return nil
}

func (c *Cloud) step(name, step string) {
	if c.obs != nil {
		c.obs.Step(name, step)
	}
}

// failure is a lifecycle step that went wrong.
type failure struct {
	step string
	err  error
}

// create runs one VM's create lifecycle in salt-cloud's order.
func (c *Cloud) create(ctx context.Context, req *Request) Result {
	vm := req.VM
	start := time.Now()
	res := Result{Name: vm.Name, Action: "create", Profile: vm.Profile.Name, Provider: vm.ProviderDriver()}
	log := c.log.With("vm", vm.Name, "profile", vm.Profile.Name, "provider", vm.Provider.Alias)
	node, warnings, f := c.createSteps(ctx, req, log)
	res.Node, res.Warnings, res.Elapsed = node, warnings, time.Since(start)
	if f == nil {
		res.Status, res.Exists = Created, true
		log.Info("created", "id", node.ID, "ip", node.IP(), "elapsed", res.Elapsed)
		return res
	}
	res.Status, res.Step, res.Err = Failed, f.step, f.err
	if errors.Is(f.err, ErrExists) {
		res.Status, res.Step, res.Err = Exists, "", nil
		res.Exists = true
		return res
	}
	res.Error = f.err.Error()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventTimeout)
	defer cancel()
	if err := c.fire(fctx, vm.Name, f.step+"/failed", "", map[string]any{"error": f.err.Error(), "name": vm.Name,
		"profile": vm.Profile.Name, "provider": vm.ProviderDriver(), "driver": vm.ProviderDriver()}); err != nil {
		log.Error("reporting the failure", "err", err)
	}
	if node == nil || node.ID == "" {
		if d, err := c.Driver(fctx, vm.Provider.Alias); err == nil {
			if n, err := d.Node(fctx, vm.Name); err == nil {
				c.fill(n, vm.Provider)
				res.Node = n
			}
		}
	}
	res.Exists = res.Node != nil && res.Node.ID != ""
	log.Error("create failed", "step", f.step, "err", f.err, "exists", res.Exists)
	return res
}

func (c *Cloud) createSteps(ctx context.Context, req *Request, log *slog.Logger) (*Node, []string, *failure) {
	vm := req.VM
	pd := vm.ProviderDriver()
	c.step(vm.Name, "creating")
	creating, err := filterEvent(vm, "creating", map[string]any{"name": vm.Name, "profile": vm.Profile.Name, "provider": pd, "driver": pd})
	if err != nil {
		return nil, nil, &failure{"creating", err}
	}
	if err := c.fire(ctx, vm.Name, "creating", "starting create", creating); err != nil {
		return nil, nil, &failure{"creating", err}
	}
	d, err := c.Driver(ctx, vm.Provider.Alias)
	if err != nil {
		return nil, nil, &failure{"creating", err}
	}
	c.step(vm.Name, "requesting")
	if err := c.fire(ctx, vm.Name, "requesting", "requesting instance", map[string]any{
		"kwargs": req.Kwargs, "location": req.Location}); err != nil {
		return nil, nil, &failure{"requesting", err}
	}
	node, err := d.Create(ctx, req)
	if err != nil {
		return nil, nil, &failure{"requesting", err}
	}
	c.fill(node, vm.Provider)
	node.Profile = vm.Profile.Name
	c.step(vm.Name, "querying")
	if err := c.fire(ctx, vm.Name, "querying", "querying instance", map[string]any{"instance_id": node.ID}); err != nil {
		return node, nil, &failure{"querying", err}
	}
	if req.WaitForIP {
		c.step(vm.Name, "waiting for ip")
		wctx, cancel := context.WithTimeout(ctx, req.IPTimeout)
		n, err := d.WaitForIP(wctx, node)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w (wait_for_ip_timeout %s)", ErrIPTimeout, req.IPTimeout)
			}
			return node, nil, &failure{"querying", err}
		}
		c.fill(n, vm.Provider)
		n.Profile = vm.Profile.Name
		node = n
		c.step(vm.Name, "waiting_for_ssh")
		if err := c.fire(ctx, vm.Name, "waiting_for_ssh", "waiting for ssh", map[string]any{"ip_address": SSHHost(vm, node)}); err != nil {
			return node, nil, &failure{"waiting_for_ssh", err}
		}
	}
	warnings := append([]string(nil), req.Warnings...)
	deploy, err := vm.Settings.Bool("deploy", true)
	if err != nil {
		return node, nil, &failure{"deploying", err}
	}
	switch {
	case deploy && !req.WaitForIP:
		warnings = append(warnings, "deploy skipped: the VM is not powered on")
	case deploy && c.deploy == nil:
		warnings = append(warnings, "deploy skipped: deploying is not available in this version (set deploy: False to silence)")
	case deploy:
		c.step(vm.Name, "deploying")
		fire := func(ctx context.Context, task string, data map[string]any) error {
			return c.fire(ctx, vm.Name, task, "", data)
		}
		switch err := c.deploy.Deploy(ctx, vm, node, fire); {
		case errors.Is(err, ErrDeploySkipped):
			warnings = append(warnings, err.Error())
		case err != nil:
			return node, nil, &failure{"deploying", err}
		}
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	c.step(vm.Name, "created")
	created, err := filterEvent(vm, "created", c.nodePayload(node, vm.Profile.Name))
	if err != nil {
		return node, warnings, &failure{"created", err}
	}
	if err := c.fire(ctx, vm.Name, "created", "created instance", created); err != nil {
		return node, warnings, &failure{"created", err}
	}
	return node, warnings, nil
}

// nodePayload is what brine adds to created and destroyed beyond Salt.
func (c *Cloud) nodePayload(n *Node, profile string) map[string]any {
	pd := n.Provider + ":" + n.Driver
	return map[string]any{
		"name": n.Name, "profile": profile, "provider": pd, "driver": pd,
		"instance_id": n.ID, "ip_address": n.IP(),
		"private_ips": nonNil(n.PrivateIPs), "public_ips": nonNil(n.PublicIPs), "macs": nonNil(n.MACs),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// destroy runs one node's destroy lifecycle.
func (c *Cloud) destroy(ctx context.Context, n *Node) Result {
	start := time.Now()
	res := Result{Name: n.Name, Action: "destroy", Profile: n.Profile, Provider: n.Provider + ":" + n.Driver, Node: n, Exists: true}
	log := c.log.With("vm", n.Name, "provider", n.Provider)
	f := c.destroySteps(ctx, n)
	res.Elapsed = time.Since(start)
	if f == nil {
		res.Status, res.Exists = Destroyed, false
		log.Info("destroyed", "id", n.ID, "elapsed", res.Elapsed)
		return res
	}
	res.Status, res.Step, res.Err, res.Error = Failed, f.step, f.err, f.err.Error()
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eventTimeout)
	defer cancel()
	if err := c.fire(fctx, n.Name, f.step+"/failed", "", map[string]any{"error": f.err.Error(), "name": n.Name, "instance_id": n.ID}); err != nil {
		log.Error("reporting the failure", "err", err)
	}
	if d, err := c.Driver(fctx, n.Provider); err == nil {
		_, err := d.Node(fctx, n.Name)
		res.Exists = !errors.Is(err, ErrNotFound)
	}
	log.Error("destroy failed", "step", f.step, "err", f.err, "exists", res.Exists)
	return res
}

func (c *Cloud) destroySteps(ctx context.Context, n *Node) *failure {
	c.step(n.Name, "destroying")
	if err := c.fire(ctx, n.Name, "destroying", "destroying instance", map[string]any{"name": n.Name, "instance_id": n.ID}); err != nil {
		return &failure{"destroying", err}
	}
	d, err := c.Driver(ctx, n.Provider)
	if err != nil {
		return &failure{"destroying", err}
	}
	if err := d.Destroy(ctx, n); err != nil {
		return &failure{"destroying", err}
	}
	if f, ok := c.deploy.(Forgetter); ok {
		if err := f.Forget(ctx, n); err != nil {
			c.log.Warn("forgetting the destroyed VM's host keys", "vm", n.Name, "err", err)
		}
	}
	if c.keys != nil {
		// The VM is gone whatever becomes of its key: a failure is
		// reported, and brine key -d finishes the job.
		if err := c.keys.DeleteKey(ctx, n.Name); err != nil {
			c.log.Warn("deleting the destroyed VM's agent key", "vm", n.Name, "err", err)
		}
	}
	c.step(n.Name, "destroyed")
	if err := c.fire(ctx, n.Name, "destroyed", "destroyed instance", c.nodePayload(n, n.Profile)); err != nil {
		return &failure{"destroyed", err}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
