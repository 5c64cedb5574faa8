// Package ec2 is brine's Amazon EC2 cloud driver (salt-cloud's `driver:
// ec2`), built on aws-sdk-go-v2.
//
// Provider keys: id and key (the access key pair; without them the
// standard AWS credential chain is used: environment, shared files, the
// instance role), keyname, private_key, location (the region, default
// us-east-1), endpoint (an EC2-compatible API, or a test server),
// max_attempts (tries per API call under throttling, default 10), owner
// (whose images --list-images shows, default amazon). Profile keys: image,
// size, availability_zone, securitygroup, securitygroupid, subnetid,
// iam_profile, tag, block_device_mappings, wait_for_ip_timeout,
// wait_for_ip_interval; ssh_interface and ssh_username are the deploy
// step's. spot_config, network_interfaces and volumes are refused as not
// supported yet.
//
// Instances are created with a ClientToken derived from the provider and
// the VM's name, so a retried or re-run create never makes a second
// instance, and tagged Name and salt-cloud-profile: destroy and listings
// find them by their Name tag.
package ec2

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/brinehq/brine/cloud"
)

// Driver name in provider files.
const Driver = "ec2"

// Tags brine sets on the instances it creates.
const (
	NameTag    = "Name"
	ProfileTag = "salt-cloud-profile"
)

// liveStates are the states of an instance that exists (not going away).
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// driver is a Driver connected to one account in one region.
type driver struct {
	client ops
	alias  string
	region string
	owner  string
	// intervals are the wait_for_ip_interval of instances being created,
	// by id, from Create to WaitForIP.
	intervals sync.Map
}

// Open connects to the provider's region and checks the credentials with
// one call, so that wrong keys are reported before anything is made.
func Open(ctx context.Context, p *cloud.Provider) (cloud.Driver, error) {
	s := p.Settings
	region, err := s.String("location")
	if err != nil {
		return nil, err
	}
	if region == "" {
		region = DefaultRegion
	}
	endpoint, err := s.String("endpoint")
	if err != nil {
		return nil, err
	}
	id, err := s.Secret("id")
	if err != nil {
		return nil, err
	}
	key, err := s.Secret("key")
	if err != nil {
		return nil, err
	}
	attempts := DefaultMaxAttempts
	if err := s.Decode("max_attempts", &attempts); err != nil {
		return nil, err
	}
	if attempts < 1 {
		return nil, s["max_attempts"].Errorf("must be at least 1")
	}
	owner := "amazon"
	if err := s.Decode("owner", &owner); err != nil {
		return nil, err
	}
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	switch {
	case id.Reveal() != "" && key.Reveal() != "":
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(id.Reveal(), key.Reveal(), "")))
	case id.Reveal() != "" || key.Reveal() != "":
		return nil, fmt.Errorf("%w: %s:%d: provider %s: set both id and key, or neither (to use the AWS credential chain)", cloud.ErrConfig, p.File, p.Line, p.Alias)
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("provider %s: AWS configuration: %w", p.Alias, err)
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = attempts
			// Parallel creates share the account's rate: back off on
			// each throttle, without a client-side quota that would give
			// up before EC2 does.
			o.RateLimiter = ratelimit.None
		})
	}
	client := ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	d := &driver{client: opsOf(client), alias: p.Alias, region: region, owner: owner}
	if _, err := client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{}); err != nil {
		return nil, explain("checking the credentials", err)
	}
	return d, nil
}

// Close has nothing to release: the SDK's HTTP connections are pooled.
func (d *driver) Close() error { return nil }

// plan is a prepared RunInstances.
type plan struct {
	input *ec2.RunInstancesInput
	p     *profile
}

// Prepare checks the VM's keys and builds the RunInstances request.
func (d *driver) Prepare(_ context.Context, vm *cloud.VM) (*cloud.Request, error) {
	p, err := decodeProfile(vm)
	if err != nil {
		return nil, err
	}
	tags := []types.Tag{{Key: aws.String(NameTag), Value: aws.String(vm.Name)}, {Key: aws.String(ProfileTag), Value: aws.String(vm.Profile.Name)}}
	for _, k := range sortedKeys(p.Tags) {
		if k == NameTag || k == ProfileTag {
			continue
		}
		tags = append(tags, types.Tag{Key: aws.String(k), Value: aws.String(p.Tags[k])})
	}
	in := &ec2.RunInstancesInput{
		ImageId: aws.String(p.Image), InstanceType: types.InstanceType(p.Size),
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ClientToken:       aws.String(ClientToken(d.alias, d.region, vm.Name)),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance, Tags: tags}},
	}
	kwargs := map[string]any{"Action": "RunInstances", "ImageId": p.Image, "InstanceType": p.Size, "MinCount": 1, "MaxCount": 1,
		"ClientToken": *in.ClientToken}
	if p.KeyName != "" {
		in.KeyName = aws.String(p.KeyName)
		kwargs["KeyName"] = p.KeyName
	}
	if p.Zone != "" {
		in.Placement = &types.Placement{AvailabilityZone: aws.String(p.Zone)}
		kwargs["Placement.AvailabilityZone"] = p.Zone
	}
	if p.Subnet != "" {
		in.SubnetId = aws.String(p.Subnet)
		kwargs["SubnetId"] = p.Subnet
	}
	if p.IAMProfile != "" {
		if strings.HasPrefix(p.IAMProfile, "arn:") {
			in.IamInstanceProfile = &types.IamInstanceProfileSpecification{Arn: aws.String(p.IAMProfile)}
			kwargs["IamInstanceProfile.Arn"] = p.IAMProfile
		} else {
			in.IamInstanceProfile = &types.IamInstanceProfileSpecification{Name: aws.String(p.IAMProfile)}
			kwargs["IamInstanceProfile.Name"] = p.IAMProfile
		}
	}
	in.SecurityGroups = p.SecurityGroups
	in.SecurityGroupIds = p.SecurityGroupIDs
	for i, g := range p.SecurityGroups {
		kwargs["SecurityGroup."+strconv.Itoa(i+1)] = g
	}
	for i, g := range p.SecurityGroupIDs {
		kwargs["SecurityGroupId."+strconv.Itoa(i+1)] = g
	}
	for i, b := range p.Devices {
		m := types.BlockDeviceMapping{DeviceName: aws.String(b.DeviceName)}
		if b.VirtualName != "" {
			m.VirtualName = aws.String(b.VirtualName)
		} else {
			m.Ebs = &types.EbsBlockDevice{DeleteOnTermination: b.DeleteOnTermination, Encrypted: b.Encrypted}
			if b.VolumeSize > 0 {
				m.Ebs.VolumeSize = aws.Int32(b.VolumeSize)
			}
			if b.VolumeType != "" {
				m.Ebs.VolumeType = types.VolumeType(b.VolumeType)
			}
			if b.IOPS > 0 {
				m.Ebs.Iops = aws.Int32(b.IOPS)
			}
			if b.SnapshotID != "" {
				m.Ebs.SnapshotId = aws.String(b.SnapshotID)
			}
		}
		in.BlockDeviceMappings = append(in.BlockDeviceMappings, m)
		kwargs["BlockDeviceMapping."+strconv.Itoa(i+1)+".DeviceName"] = b.DeviceName
	}
	return &cloud.Request{
		VM: vm, Kwargs: kwargs, Location: d.region, Source: p.Image,
		WaitForIP: true, IPTimeout: p.IPTimeout, Plan: &plan{input: in, p: p},
		Warnings: cloud.UnknownKeys(vm, Driver, knownKeys()),
	}, nil
}

// ClientToken is the idempotency token of VM name's create on a provider:
// the same for every retry and re-run, different for every provider,
// region and name.
func ClientToken(alias, region, name string) string {
	sum := sha256.Sum256([]byte(alias + "\x00" + region + "\x00" + name))
	return "brine-" + hex.EncodeToString(sum[:24])
}

// maxTokenChain bounds how many terminated namesakes Create steps over.
const maxTokenChain = 16

// Create runs the instance, unless a live one of that name exists
// (ErrExists). EC2 keeps a ClientToken's reservation after the instance
// is terminated, so a name made again after a destroy chains the token
// with the terminated instance's id: every retry follows the same chain
// to the same new instance.
func (d *driver) Create(ctx context.Context, req *cloud.Request) (*cloud.Node, error) {
	pl := req.Plan.(*plan)
	switch n, err := d.Node(ctx, req.VM.Name); {
	case err == nil:
		return nil, fmt.Errorf("%s (%s): %w", req.VM.Name, n.ID, cloud.ErrExists)
	case !errors.Is(err, cloud.ErrNotFound):
		return nil, err
	}
	in := *pl.input
	token := *in.ClientToken
	for range maxTokenChain {
		in.ClientToken = aws.String(token)
		out, err := d.client.runInstances(ctx, &in)
		if err != nil {
			return nil, explain("RunInstances", err)
		}
		if len(out.Instances) != 1 {
			return nil, fmt.Errorf("RunInstances returned %d instances, want 1", len(out.Instances))
		}
		inst := out.Instances[0]
		switch inst.State.Name {
		case types.InstanceStateNameShuttingDown, types.InstanceStateNameTerminated:
			sum := sha256.Sum256([]byte(token + "\x00" + aws.ToString(inst.InstanceId)))
			token = "brine-" + hex.EncodeToString(sum[:24])
			continue
		}
		n := d.toNode(inst)
		d.intervals.Store(n.ID, pl.p.PollInterval)
		return n, nil
	}
	return nil, fmt.Errorf("%s: more than %d terminated instances hold this name's client tokens", req.VM.Name, maxTokenChain)
}

// WaitForIP waits, with the SDK's waiter, until the instance runs (it has
// its addresses then), for as long as ctx allows.
func (d *driver) WaitForIP(ctx context.Context, n *cloud.Node) (*cloud.Node, error) {
	maxWait := 24 * time.Hour
	if dl, ok := ctx.Deadline(); ok {
		maxWait = time.Until(dl)
	}
	interval := DefaultPollInterval
	if v, ok := d.intervals.LoadAndDelete(n.ID); ok {
		interval = v.(time.Duration)
	}
	w := ec2.NewInstanceRunningWaiter(d.client, func(o *ec2.InstanceRunningWaiterOptions) {
		o.MinDelay, o.MaxDelay = interval, max(interval, 6*interval)
	})
	out, err := w.WaitForOutput(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{n.ID}}, maxWait)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if strings.Contains(err.Error(), "exceeded max wait time") {
			return nil, context.DeadlineExceeded
		}
		if strings.Contains(err.Error(), "transitioned to Failure") {
			return nil, fmt.Errorf("instance %s stopped or terminated while starting", n.ID)
		}
		return nil, explain("waiting for the instance to run", err)
	}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			if aws.ToString(inst.InstanceId) == n.ID {
				return d.toNode(inst), nil
			}
		}
	}
	return nil, fmt.Errorf("instance %s: %w", n.ID, cloud.ErrNotFound)
}

// Destroy terminates the instance and waits until it is terminated; an
// instance already gone is not an error.
func (d *driver) Destroy(ctx context.Context, n *cloud.Node) error {
	_, err := d.client.terminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{n.ID}})
	if err != nil {
		err = explain("TerminateInstances", err)
		if errors.Is(err, cloud.ErrNotFound) {
			return nil
		}
		return err
	}
	w := ec2.NewInstanceTerminatedWaiter(d.client, func(o *ec2.InstanceTerminatedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, 15*time.Second
	})
	if err := w.Wait(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{n.ID}}, 10*time.Minute); err != nil {
		return explain("waiting for the instance to terminate", err)
	}
	return nil
}

// Node finds the live instance whose Name tag is name.
func (d *driver) Node(ctx context.Context, name string) (*cloud.Node, error) {
	nodes, err := d.describe(ctx, []types.Filter{
		{Name: aws.String("tag:" + NameTag), Values: []string{name}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	})
	if err != nil {
		return nil, err
	}
	switch len(nodes) {
	case 0:
		return nil, fmt.Errorf("instance named %q: %w", name, cloud.ErrNotFound)
	case 1:
		return nodes[0], nil
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return nil, fmt.Errorf("%d live instances are named %q (%s): brine will not choose one", len(nodes), name, strings.Join(ids, ", "))
}

// Nodes lists the region's live instances, page by page.
func (d *driver) Nodes(ctx context.Context) ([]*cloud.Node, error) {
	return d.describe(ctx, []types.Filter{{Name: aws.String("instance-state-name"), Values: liveStates}})
}

func (d *driver) describe(ctx context.Context, filters []types.Filter) ([]*cloud.Node, error) {
	var out []*cloud.Node
	pages := ec2.NewDescribeInstancesPaginator(d.client, &ec2.DescribeInstancesInput{Filters: filters, MaxResults: aws.Int32(1000)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, explain("DescribeInstances", err)
		}
		for _, r := range page.Reservations {
			for _, inst := range r.Instances {
				out = append(out, d.toNode(inst))
			}
		}
	}
	return out, nil
}

func (d *driver) toNode(inst types.Instance) *cloud.Node {
	n := &cloud.Node{ID: aws.ToString(inst.InstanceId), Image: aws.ToString(inst.ImageId), Size: string(inst.InstanceType), MACs: []string{},
		Extra: map[string]any{"region": d.region}}
	if inst.State != nil {
		n.State = string(inst.State.Name)
	}
	for _, t := range inst.Tags {
		switch aws.ToString(t.Key) {
		case NameTag:
			n.Name = aws.ToString(t.Value)
		case ProfileTag:
			n.Profile = aws.ToString(t.Value)
		}
	}
	if n.Name == "" {
		n.Name = n.ID
	}
	var addrs []string
	if ip := aws.ToString(inst.PublicIpAddress); ip != "" {
		addrs = append(addrs, ip)
	}
	if ip := aws.ToString(inst.PrivateIpAddress); ip != "" {
		addrs = append(addrs, ip)
	}
	n.SetIPs(addrs)
	// An address EC2 calls private stays private (e.g. in 100.64/10).
	if ip := aws.ToString(inst.PrivateIpAddress); ip != "" && !contains(n.PrivateIPs, ip) {
		n.PublicIPs = remove(n.PublicIPs, ip)
		n.PrivateIPs = append(n.PrivateIPs, ip)
	}
	for _, nic := range inst.NetworkInterfaces {
		if mac := aws.ToString(nic.MacAddress); mac != "" {
			n.MACs = append(n.MACs, mac)
		}
	}
	if inst.Placement != nil && inst.Placement.AvailabilityZone != nil {
		n.Extra["availability_zone"] = *inst.Placement.AvailabilityZone
	}
	for k, v := range map[string]*string{"key_name": inst.KeyName, "subnet_id": inst.SubnetId, "vpc_id": inst.VpcId} {
		if v != nil {
			n.Extra[k] = *v
		}
	}
	if inst.LaunchTime != nil {
		n.Extra["launch_time"] = inst.LaunchTime.UTC().Format(time.RFC3339)
	}
	return n
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func remove(s []string, v string) []string {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// Images lists the available images of the provider's owner (default
// amazon; `owner: self` for the account's own AMIs).
func (d *driver) Images(ctx context.Context) ([]cloud.Resource, error) {
	out, err := d.client.describeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{d.owner},
		Filters: []types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}})
	if err != nil {
		return nil, explain("DescribeImages", err)
	}
	rs := make([]cloud.Resource, 0, len(out.Images))
	for _, im := range out.Images {
		rs = append(rs, cloud.Resource{ID: aws.ToString(im.ImageId), Name: aws.ToString(im.Name), Details: map[string]any{
			"description": aws.ToString(im.Description), "architecture": string(im.Architecture), "owner": aws.ToString(im.OwnerId)}})
	}
	return rs, nil
}

// Sizes lists the instance types offered in the region.
func (d *driver) Sizes(ctx context.Context) ([]cloud.Resource, error) {
	var rs []cloud.Resource
	pages := ec2.NewDescribeInstanceTypesPaginator(d.client, &ec2.DescribeInstanceTypesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, explain("DescribeInstanceTypes", err)
		}
		for _, t := range page.InstanceTypes {
			det := map[string]any{}
			if t.VCpuInfo != nil && t.VCpuInfo.DefaultVCpus != nil {
				det["vcpus"] = *t.VCpuInfo.DefaultVCpus
			}
			if t.MemoryInfo != nil && t.MemoryInfo.SizeInMiB != nil {
				det["memory_mb"] = *t.MemoryInfo.SizeInMiB
			}
			rs = append(rs, cloud.Resource{ID: string(t.InstanceType), Name: string(t.InstanceType), Details: det})
		}
	}
	return rs, nil
}

// Locations lists the regions (the provider's location) and the
// availability zones of the provider's region.
func (d *driver) Locations(ctx context.Context) ([]cloud.Resource, error) {
	regions, err := d.client.describeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil {
		return nil, explain("DescribeRegions", err)
	}
	var rs []cloud.Resource
	for _, r := range regions.Regions {
		rs = append(rs, cloud.Resource{ID: aws.ToString(r.RegionName), Name: aws.ToString(r.RegionName), Details: map[string]any{"type": "region", "endpoint": aws.ToString(r.Endpoint)}})
	}
	zones, err := d.client.describeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		return nil, explain("DescribeAvailabilityZones", err)
	}
	for _, z := range zones.AvailabilityZones {
		rs = append(rs, cloud.Resource{ID: aws.ToString(z.ZoneName), Name: aws.ToString(z.ZoneName), Details: map[string]any{"type": "availability_zone", "region": aws.ToString(z.RegionName)}})
	}
	return rs, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ops are the EC2 operations the driver calls, as functions: the driver
// holds no *ec2.Client (nor anything holding one) that could reach an
// interface, because a type converted to an interface keeps all its
// exported methods in the binary once anything in it calls a method by
// name through reflection (text/template, the vCenter simulator do) — for
// the EC2 client, several hundred operations, 20 MB of brine's size.
type ops struct {
	runInstances              func(context.Context, *ec2.RunInstancesInput, ...func(*ec2.Options)) (*ec2.RunInstancesOutput, error)
	terminateInstances        func(context.Context, *ec2.TerminateInstancesInput, ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
	describeImages            func(context.Context, *ec2.DescribeImagesInput, ...func(*ec2.Options)) (*ec2.DescribeImagesOutput, error)
	describeRegions           func(context.Context, *ec2.DescribeRegionsInput, ...func(*ec2.Options)) (*ec2.DescribeRegionsOutput, error)
	describeAvailabilityZones func(context.Context, *ec2.DescribeAvailabilityZonesInput, ...func(*ec2.Options)) (*ec2.DescribeAvailabilityZonesOutput, error)
	describeInstances         func(context.Context, *ec2.DescribeInstancesInput, ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	describeInstanceTypes     func(context.Context, *ec2.DescribeInstanceTypesInput, ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error)
}

func opsOf(c *ec2.Client) ops {
	return ops{runInstances: c.RunInstances, terminateInstances: c.TerminateInstances, describeImages: c.DescribeImages,
		describeRegions: c.DescribeRegions, describeAvailabilityZones: c.DescribeAvailabilityZones,
		describeInstances: c.DescribeInstances, describeInstanceTypes: c.DescribeInstanceTypes}
}

// DescribeInstances and DescribeInstanceTypes make ops the client the
// SDK's waiters and paginators take.
func (o ops) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	return o.describeInstances(ctx, in, opts...)
}

func (o ops) DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	return o.describeInstanceTypes(ctx, in, opts...)
}
