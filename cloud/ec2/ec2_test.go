package ec2_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinehq/brine/bus"
	"github.com/brinehq/brine/bus/natsbus"
	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/ec2"
	"github.com/brinehq/brine/cloud/ec2/ec2test"
	"github.com/brinehq/brine/internal/syncbuf"
)

const (
	accessKey = "AKIDBRINETEST0001"
	secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYsecretEXAMPLE"
)

// env is a fake EC2 endpoint, a durable bus and a cloud config pointing
// at the endpoint.
type env struct {
	t   *testing.T
	ec2 *ec2test.Server
	dir string
	bus *natsbus.Bus
	log *syncbuf.Buffer

	mu     sync.Mutex
	events []*bus.Event
}

func newEnv(t *testing.T, cfg ec2test.Config, providerExtra string) *env {
	t.Helper()
	cfg.AccessKey, cfg.SecretKey = accessKey, secretKey
	srv := ec2test.New(cfg)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := natsbus.Open(ctx, natsbus.Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e := &env{t: t, ec2: srv, dir: t.TempDir(), bus: b, log: &syncbuf.Buffer{}}
	sub, err := b.Subscribe(context.Background(), bus.SubscribeOptions{Pattern: "salt/cloud/*"}, func(ev *bus.Event) {
		e.mu.Lock()
		e.events = append(e.events, ev)
		e.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	t.Setenv("TEST_EC2_SECRET", secretKey)
	e.write("cloud.providers", fmt.Sprintf(`my-ec2:
  driver: ec2
  id: %s
  key: sdb://osenv/TEST_EC2_SECRET
  keyname: deploy-key
  location: us-east-1
  endpoint: %s
  securitygroup: [default, web]
%s`, accessKey, srv.URL, providerExtra))
	e.write("cloud.profiles", `small:
  provider: my-ec2
  image: ami-0debian12
  size: t3.micro
  wait_for_ip_interval: 0.05
  deploy: False
  tag: {team: infra}
  block_device_mappings:
    - DeviceName: /dev/sdb
      Ebs.VolumeSize: 20
      Ebs.VolumeType: gp3
`)
	return e
}

func (e *env) write(name, content string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, name), []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) cloud() *cloud.Cloud {
	e.t.Helper()
	cfg, err := cloud.LoadConfig(e.dir)
	if err != nil {
		e.t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := cloud.New(cfg, map[string]cloud.Opener{ec2.Driver: ec2.Open}, cloud.BusPublisher{Bus: e.bus, Source: "brine://test/cloud"}, cloud.WithLogger(log))
	e.t.Cleanup(func() { c.Close() })
	return c
}

// eventsOf waits for n events of VM name and returns their tasks and data.
func (e *env) eventsOf(name string, n int) ([]string, map[string]map[string]any) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var tasks []string
		data := map[string]map[string]any{}
		e.mu.Lock()
		for _, ev := range e.events {
			if task, ok := strings.CutPrefix(ev.Tag, "salt/cloud/"+name+"/"); ok {
				tasks = append(tasks, task)
				var m map[string]any
				if err := json.Unmarshal(ev.Data, &m); err != nil {
					e.t.Fatal(err)
				}
				data[task] = m
			}
		}
		e.mu.Unlock()
		if len(tasks) >= n || time.Now().After(deadline) {
			return tasks, data
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allEvents is every event's JSON, for looking for secrets.
func (e *env) allEvents() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.events {
		j, _ := json.Marshal(ev)
		b.Write(j)
	}
	return b.String()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func create(t *testing.T, c *cloud.Cloud, parallel int, names ...string) []cloud.Result {
	t.Helper()
	ctx := ctxT(t)
	plan, err := c.PlanProfile(ctx, "small", names)
	if err != nil {
		t.Fatal(err)
	}
	return c.Run(ctx, plan, parallel)
}

func destroy(t *testing.T, c *cloud.Cloud, names ...string) []cloud.Result {
	t.Helper()
	ctx := ctxT(t)
	plan, err := c.PlanDestroy(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	return c.Run(ctx, plan, 0)
}

func TestCreateAndDestroy(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "")
	c := e.cloud()
	res := create(t, c, 0, "web1")
	if len(res) != 1 || res[0].Status != cloud.Created {
		t.Fatalf("create: %+v", res)
	}
	node := res[0].Node
	if !strings.HasPrefix(node.ID, "i-") || len(node.PrivateIPs) != 1 || len(node.PublicIPs) != 1 || len(node.MACs) != 1 || node.State != "running" {
		t.Errorf("node %+v", node)
	}
	tasks, data := e.eventsOf("web1", 5)
	if want := []string{"creating", "requesting", "querying", "waiting_for_ssh", "created"}; !slices.Equal(tasks, want) {
		t.Fatalf("events %v, want %v", tasks, want)
	}
	kw, _ := data["requesting"]["kwargs"].(map[string]any)
	if kw["Action"] != "RunInstances" || kw["ImageId"] != "ami-0debian12" || kw["InstanceType"] != "t3.micro" || kw["KeyName"] != "deploy-key" ||
		kw["SecurityGroup.1"] != "default" || kw["SecurityGroup.2"] != "web" || data["requesting"]["location"] != "us-east-1" {
		t.Errorf("requesting %v", data["requesting"])
	}
	if data["querying"]["instance_id"] != node.ID || data["waiting_for_ssh"]["ip_address"] != node.PublicIPs[0] {
		t.Errorf("querying %v, waiting_for_ssh %v", data["querying"], data["waiting_for_ssh"])
	}
	cr := data["created"]
	if cr["instance_id"] != node.ID || cr["provider"] != "my-ec2:ec2" || cr["ip_address"] != node.PublicIPs[0] || cr["event"] != "created instance" {
		t.Errorf("created %v", cr)
	}
	// What EC2 was asked for.
	insts := e.ec2.Instances()
	if len(insts) != 1 {
		t.Fatalf("%d instances", len(insts))
	}
	in := insts[0]
	if in.Tags["Name"] != "web1" || in.Tags["salt-cloud-profile"] != "small" || in.Tags["team"] != "infra" ||
		in.ClientToken != ec2.ClientToken("my-ec2", "us-east-1", "web1") || in.KeyName != "deploy-key" ||
		!slices.Equal(in.SecurityGroups, []string{"default", "web"}) || in.Devices["/dev/sdb"] != 20 {
		t.Errorf("instance %+v", in)
	}

	res = destroy(t, c, "web1")
	if len(res) != 1 || res[0].Status != cloud.Destroyed {
		t.Fatalf("destroy: %+v", res)
	}
	tasks, data = e.eventsOf("web1", 7)
	if !slices.Equal(tasks[5:], []string{"destroying", "destroyed"}) || data["destroyed"]["instance_id"] != node.ID {
		t.Errorf("destroy events %v %v", tasks, data["destroyed"])
	}
	if st := e.ec2.Instances()[0].State; st != ec2test.Terminated {
		t.Errorf("state after destroy %v", st)
	}
	// Destroying again finds nothing.
	if res := destroy(t, c, "web1"); res[0].Status != cloud.Absent {
		t.Errorf("second destroy %+v", res)
	}

	// Made again after the destroy: a new instance, though EC2 keeps the
	// first client token's (terminated) reservation.
	res = create(t, c, 0, "web1")
	if res[0].Status != cloud.Created || res[0].Node.ID == node.ID {
		t.Fatalf("re-create: %+v", res[0])
	}
	if n := len(e.ec2.Instances()); n != 2 {
		t.Errorf("%d instances after re-create, want 2", n)
	}
	noSecrets(t, map[string]string{"events": e.allEvents(), "log": e.log.String(), "results": jsonOf(res)})
}

func TestCreateIsIdempotent(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "")
	c := e.cloud()
	// The reply to RunInstances is lost twice: the SDK retries with the
	// same client token and EC2 hands back the instance made the first
	// time.
	e.ec2.LoseReplies("RunInstances", 2)
	res := create(t, c, 0, "web1")
	if res[0].Status != cloud.Created {
		t.Fatalf("create: %+v", res[0])
	}
	if calls, n := e.ec2.Calls("RunInstances"), len(e.ec2.Instances()); calls != 3 || n != 1 {
		t.Errorf("%d RunInstances calls made %d instances, want 3 calls and 1 instance", calls, n)
	}
	// A re-run reports it, makes nothing.
	res = create(t, c, 0, "web1")
	if res[0].Status != cloud.Exists || len(e.ec2.Instances()) != 1 {
		t.Errorf("re-run: %+v, %d instances", res[0], len(e.ec2.Instances()))
	}
	// A create racing past the plan's check gets ErrExists from the driver.
	d, err := c.Driver(ctxT(t), "my-ec2")
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.Config()
	vm, err := cfg.NewVM("web1", "small", nil)
	if err != nil {
		t.Fatal(err)
	}
	req, err := d.Prepare(ctxT(t), vm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(ctxT(t), req); !errors.Is(err, cloud.ErrExists) {
		t.Errorf("Create of an existing name: %v", err)
	}
}

func TestParallelCreateUnderThrottling(t *testing.T) {
	e := newEnv(t, ec2test.Config{PageSize: 3}, "")
	c := e.cloud()
	names := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}
	ctx := ctxT(t)
	plan, err := c.PlanProfile(ctx, "small", names)
	if err != nil {
		t.Fatal(err)
	}
	// EC2 throttles the first calls of the burst: each is retried with
	// backoff, and no VM fails or is made twice.
	e.ec2.Throttle(6)
	start := time.Now()
	res := c.Run(ctx, plan, 8)
	for _, r := range res {
		if r.Status != cloud.Created {
			t.Errorf("%s: %s %s", r.Name, r.Status, r.Error)
		}
	}
	t.Logf("8 creates under 6 throttles in %s", time.Since(start))
	if n := e.ec2.Calls("RunInstances"); n > len(names)+6 {
		t.Errorf("%d RunInstances calls", n)
	}
	insts := e.ec2.Instances()
	seen := map[string]bool{}
	for _, in := range insts {
		seen[in.Tags["Name"]] = true
	}
	if len(insts) != len(names) || len(seen) != len(names) {
		t.Errorf("%d instances for %d names: %v", len(insts), len(names), seen)
	}
	// Listing follows NextToken over pages of 3.
	d, err := c.Driver(ctx, "my-ec2")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := d.Nodes(ctx)
	if err != nil || len(nodes) != len(names) {
		t.Errorf("Nodes: %d, %v", len(nodes), err)
	}
	sizes, err := d.Sizes(ctx)
	if err != nil || len(sizes) != 7 {
		t.Errorf("Sizes: %d, %v", len(sizes), err)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "  max_attempts: 3\n")
	c := e.cloud()
	ctx := ctxT(t)
	d, err := c.Driver(ctx, "my-ec2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Node(ctx, "nosuch"); !errors.Is(err, cloud.ErrNotFound) {
		t.Errorf("Node of an unknown name: %v", err)
	}
	if err := d.Destroy(ctx, &cloud.Node{Name: "gone", ID: "i-0000000000000dead"}); err != nil {
		t.Errorf("Destroy of an unknown instance: %v", err)
	}
	e.ec2.Throttle(10)
	_, err = d.Nodes(ctx)
	if !errors.Is(err, ec2.ErrThrottled) || !strings.Contains(err.Error(), "RequestLimitExceeded") || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("throttled past max_attempts: %v", err)
	}
	e.ec2.Throttle(6)

	// Wrong secret key: refused when connecting, before anything is made,
	// and the message shows neither key.
	t.Setenv("TEST_EC2_SECRET", "not-the-secret-key-at-all")
	_, err = cloud.New(c.Config(), map[string]cloud.Opener{ec2.Driver: ec2.Open}, nil).Driver(ctx, "my-ec2")
	if !errors.Is(err, ec2.ErrAuth) || !strings.Contains(err.Error(), "AuthFailure") {
		t.Errorf("wrong key: %v", err)
	}
	noSecrets(t, map[string]string{"error": err.Error()}, "not-the-secret-key-at-all")
}

func TestProfileErrors(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "")
	for _, tc := range []struct{ name, profile, want string }{
		{"spot", "p:\n  provider: my-ec2\n  image: ami-1\n  size: t3.micro\n  spot_config: {spot_price: 0.1}\n", "cloud.profiles:5: spot_config: spot instances are not supported yet"},
		{"nics", "p:\n  provider: my-ec2\n  image: ami-1\n  size: t3.micro\n  network_interfaces: []\n", "cloud.profiles:5: network_interfaces: network_interfaces are not supported yet"},
		{"no image", "p:\n  provider: my-ec2\n  size: t3.micro\n", "cloud.profiles:1: profile p: no image"},
		{"no size", "p:\n  provider: my-ec2\n  image: ami-1\n", "cloud.profiles:1: profile p: no size"},
		{"bad groups", "p:\n  provider: my-ec2\n  image: ami-1\n  size: t3.micro\n  securitygroupid: {a: b}\n", "cloud.profiles:5: securitygroupid: want a name or a list"},
		{"bad device", "p:\n  provider: my-ec2\n  image: ami-1\n  size: t3.micro\n  block_device_mappings: [{Ebs.VolumeSize: 8}]\n", "block_device_mappings: entry 1 has no DeviceName"},
		{"bad timeout", "p:\n  provider: my-ec2\n  image: ami-1\n  size: t3.micro\n  wait_for_ip_timeout: -1\n", "cloud.profiles:5: wait_for_ip_timeout: must be a positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.write("cloud.profiles", tc.profile)
			_, err := e.cloud().PlanProfile(ctxT(t), "p", []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, cloud.ErrConfig) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestListings(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "")
	c := e.cloud()
	ctx := ctxT(t)
	d, err := c.Driver(ctx, "my-ec2")
	if err != nil {
		t.Fatal(err)
	}
	images, err := d.Images(ctx)
	if err != nil || len(images) != 2 || images[0].ID != "ami-0debian12" {
		t.Errorf("Images: %+v, %v", images, err)
	}
	locs, err := d.Locations(ctx)
	if err != nil || len(locs) != 4 || locs[0].Name != "us-east-1" || locs[2].Name != "us-east-1a" {
		t.Errorf("Locations: %+v, %v", locs, err)
	}
}

func noSecrets(t *testing.T, texts map[string]string, extra ...string) {
	t.Helper()
	for where, text := range texts {
		for _, s := range append([]string{secretKey, accessKey}, extra...) {
			if strings.Contains(text, s) {
				t.Errorf("a secret appears in the %s", where)
			}
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCredentialChain(t *testing.T) {
	// No id and key: the standard chain finds them in the environment.
	e := newEnv(t, ec2test.Config{}, "")
	e.write("cloud.providers", fmt.Sprintf("chain:\n  driver: ec2\n  endpoint: %s\n", e.ec2.URL))
	e.write("cloud.profiles", "p:\n  provider: chain\n  image: ami-0debian12\n  size: t3.micro\n  wait_for_ip_interval: 0.05\n  deploy: False\n")
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey,
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": ""} {
		t.Setenv(k, v)
	}
	c := e.cloud()
	ctx := ctxT(t)
	plan, err := c.PlanProfile(ctx, "p", []string{"chained"})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Run(ctx, plan, 0); res[0].Status != cloud.Created || res[0].Provider != "chain:ec2" {
		t.Fatalf("%+v", res[0])
	}
	// Only one of id and key is a mistake, not a fallback.
	e.write("cloud.providers", fmt.Sprintf("chain:\n  driver: ec2\n  endpoint: %s\n  id: %s\n", e.ec2.URL, accessKey))
	_, err = e.cloud().Driver(ctx, "chain")
	if !errors.Is(err, cloud.ErrConfig) || !strings.Contains(err.Error(), "cloud.providers:1: provider chain: set both id and key, or neither") {
		t.Errorf("id without key: %v", err)
	}
}

func TestWaitingForSSHFollowsSSHInterface(t *testing.T) {
	e := newEnv(t, ec2test.Config{}, "  ssh_interface: private_ips\n")
	res := create(t, e.cloud(), 0, "inner")
	if res[0].Status != cloud.Created {
		t.Fatalf("%+v", res[0])
	}
	_, data := e.eventsOf("inner", 5)
	n := res[0].Node
	if data["waiting_for_ssh"]["ip_address"] != n.PrivateIPs[0] || len(n.PublicIPs) != 1 {
		t.Errorf("waiting_for_ssh %v for node %+v: want its private address", data["waiting_for_ssh"], n)
	}
}
