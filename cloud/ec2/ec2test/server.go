// Package ec2test is a fake Amazon EC2 endpoint for tests: no EC2 emulator
// can be installed where brine is built, so this one speaks enough of the
// EC2 Query API (form POSTs with Action=…, XML replies in the 2016-11-15
// namespace, <Response><Errors> errors) for aws-sdk-go-v2 to talk to it
// unmodified, with only BaseEndpoint pointing here.
//
// It keeps instances through their life (pending 0 → running 16 →
// shutting-down 32 → terminated 48, one step per DescribeInstances that
// sees them), honours ClientToken idempotency as EC2 does (the same token
// returns the same reservation, even once terminated; other parameters
// with it are IdempotentParameterMismatch), filters by tag, state and id,
// pages with NextToken, verifies SigV4 signatures against its one key
// pair, and can be told to throttle.
package ec2test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Namespace is the EC2 API version the replies are in.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// Instance states, with EC2's codes.
var (
	Pending      = State{0, "pending"}
	Running      = State{16, "running"}
	ShuttingDown = State{32, "shutting-down"}
	Terminated   = State{48, "terminated"}
)

// State is an instance state.
type State struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

// Config configures a Server.
type Config struct {
	// AccessKey and SecretKey are the only credentials accepted; requests
	// signed otherwise get AuthFailure.
	AccessKey, SecretKey string
	// Region is the server's region (default us-east-1).
	Region string
	// IP, when set, is every instance's private address and no instance
	// gets a public one (point it at a local sshd to deploy); otherwise
	// instances get 10.0.x.y and 203.0.113.z.
	IP string
	// PageSize caps the items of a page, below any MaxResults (default
	// 1000), so that clients must follow NextToken.
	PageSize int
	// PendingPolls is how many DescribeInstances see a new instance
	// pending before it runs (default 1).
	PendingPolls int
}

// Instance is what the server knows of one instance.
type Instance struct {
	ID, Reservation, Image, Type, KeyName, Zone, Subnet string
	PrivateIP, PublicIP, MAC, ClientToken, IAMProfile   string
	SecurityGroups                                      []string
	Tags                                                map[string]string
	// Devices are the block device mappings asked for: device name →
	// volume size in GiB.
	Devices map[string]int
	State   State
	polls   int
	launch  time.Time
}

// Server is a running fake EC2 endpoint.
type Server struct {
	// URL is the endpoint to set as BaseEndpoint.
	URL string
	cfg Config
	srv *httptest.Server

	mu        sync.Mutex
	instances []*Instance
	tokens    map[string]tokenUse
	seq       int
	throttle  int
	lose      map[string]int
	calls     map[string]int
}

type tokenUse struct {
	reservation string
	params      string
}

// New starts a Server; Close stops it.
func New(cfg Config) *Server {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 1000
	}
	if cfg.PendingPolls <= 0 {
		cfg.PendingPolls = 1
	}
	s := &Server{cfg: cfg, tokens: map[string]tokenUse{}, calls: map[string]int{}, lose: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Throttle makes the next n requests fail with RequestLimitExceeded.
func (s *Server) Throttle(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle = n
}

// LoseReplies makes the next n requests of action take effect and then
// fail with InternalError, as when a reply is lost on the way: the client
// retries a request that was carried out.
func (s *Server) LoseReplies(action string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose[action] = n
}

// Calls is how many requests of action were answered (throttled and
// refused ones included).
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

// Instances returns a copy of every instance ever made, terminated ones
// included, in launch order.
func (s *Server) Instances() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, len(s.instances))
	for i, in := range s.instances {
		out[i] = *in
	}
	return out
}

// apiError is an EC2 error reply.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || r.Method != http.MethodPost {
		writeError(w, errorf(400, "MalformedQueryString", "want a form POST"))
		return
	}
	action := form.Get("Action")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[action]++
	if err := s.verify(r, body); err != nil {
		writeError(w, err)
		return
	}
	if s.throttle > 0 {
		s.throttle--
		writeError(w, errorf(503, "RequestLimitExceeded", "Request limit exceeded."))
		return
	}
	var reply any
	switch action {
	case "RunInstances":
		reply, err = s.runInstances(form)
	case "DescribeInstances":
		reply, err = s.describeInstances(form)
	case "TerminateInstances":
		reply, err = s.terminateInstances(form)
	case "DescribeImages":
		reply = s.describeImages()
	case "DescribeInstanceTypes":
		reply, err = s.describeInstanceTypes(form)
	case "DescribeRegions":
		reply = &describeRegions{Regions: []region{{"us-east-1", "ec2.us-east-1.amazonaws.com"}, {"eu-west-1", "ec2.eu-west-1.amazonaws.com"}}}
	case "DescribeAvailabilityZones":
		reply = &describeZones{Zones: []zone{{s.cfg.Region + "a", "available", s.cfg.Region}, {s.cfg.Region + "b", "available", s.cfg.Region}}}
	default:
		err = errorf(400, "InvalidAction", "The action %s is not valid for this web service.", action)
	}
	if err == nil && s.lose[action] > 0 {
		s.lose[action]--
		err = errorf(500, "InternalError", "An internal error has occurred")
	}
	if err != nil {
		writeError(w, err)
		return
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(reply); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, err error) {
	e, ok := err.(*apiError)
	if !ok {
		e = errorf(500, "InternalError", "%v", err)
	}
	type xmlErr struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	reply := struct {
		XMLName   xml.Name `xml:"Response"`
		Errors    []xmlErr `xml:"Errors>Error"`
		RequestID string   `xml:"RequestID"`
	}{Errors: []xmlErr{{e.code, e.message}}, RequestID: "req-err"}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.status)
	_ = xml.NewEncoder(w).Encode(reply)
}

var authRe = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/ec2/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$`)

// verify checks the SigV4 signature by signing the same request again
// with the server's key pair.
func (s *Server) verify(r *http.Request, body []byte) error {
	m := authRe.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return errorf(401, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	if m[1] != s.cfg.AccessKey {
		return errorf(401, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return errorf(400, "IncompleteSignature", "bad X-Amz-Date")
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range strings.Split(m[4], ";") {
		if h == "host" {
			continue
		}
		again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: s.cfg.AccessKey, SecretAccessKey: s.cfg.SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "ec2", m[3], when); err != nil {
		return err
	}
	if !strings.HasSuffix(again.Header.Get("Authorization"), "Signature="+m[5]) {
		return errorf(401, "AuthFailure", "AWS was not able to validate the provided access credentials")
	}
	return nil
}

// indexed reads the values of a list parameter: prefix.1, prefix.2, …
func indexed(form url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := form[prefix+"."+strconv.Itoa(i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

func (s *Server) runInstances(form url.Values) (any, error) {
	image, itype := form.Get("ImageId"), form.Get("InstanceType")
	if !strings.HasPrefix(image, "ami-") {
		return nil, errorf(400, "InvalidAMIID.Malformed", "Invalid id: %q (expecting \"ami-...\")", image)
	}
	if _, ok := instanceTypes[itype]; !ok {
		return nil, errorf(400, "InvalidParameterValue", "Invalid value '%s' for InstanceType.", itype)
	}
	if form.Get("MinCount") != "1" || form.Get("MaxCount") != "1" {
		return nil, errorf(400, "InvalidParameterValue", "this fake makes one instance per call")
	}
	// What the caller asked for, to detect a token reused for another
	// request.
	keys := make([]string, 0, len(form))
	for k := range form {
		if k != "ClientToken" {
			keys = append(keys, k+"="+form.Get(k))
		}
	}
	sort.Strings(keys)
	params := strings.Join(keys, "&")
	token := form.Get("ClientToken")
	if token != "" {
		if use, ok := s.tokens[token]; ok {
			if use.params != params {
				return nil, errorf(400, "IdempotentParameterMismatch", "The client token you have provided is associated with a resource that is already deleted or has different parameters. Please use a different client token.")
			}
			return s.reservation(use.reservation, "RunInstancesResponse"), nil
		}
	}
	s.seq++
	in := &Instance{
		ID: fmt.Sprintf("i-%017x", s.seq), Reservation: fmt.Sprintf("r-%017x", s.seq), Image: image, Type: itype,
		KeyName: form.Get("KeyName"), Zone: form.Get("Placement.AvailabilityZone"), Subnet: form.Get("SubnetId"),
		ClientToken: token, IAMProfile: form.Get("IamInstanceProfile.Name") + form.Get("IamInstanceProfile.Arn"),
		SecurityGroups: append(indexed(form, "SecurityGroup"), indexed(form, "SecurityGroupId")...),
		Tags:           map[string]string{}, Devices: map[string]int{}, State: Pending, launch: time.Now().UTC(),
		MAC: fmt.Sprintf("02:00:00:%02x:%02x:%02x", byte(s.seq>>16), byte(s.seq>>8), byte(s.seq)),
	}
	if in.Zone == "" {
		in.Zone = s.cfg.Region + "a"
	}
	if in.Subnet == "" {
		in.Subnet = "subnet-0default"
	}
	if s.cfg.IP != "" {
		in.PrivateIP = s.cfg.IP
	} else {
		in.PrivateIP = fmt.Sprintf("10.0.%d.%d", s.seq/250, s.seq%250+4)
		in.PublicIP = fmt.Sprintf("203.0.113.%d", s.seq%250+1)
	}
	for i := 1; ; i++ {
		p := "TagSpecification." + strconv.Itoa(i)
		if _, ok := form[p+".ResourceType"]; !ok {
			break
		}
		if form.Get(p+".ResourceType") != "instance" {
			continue
		}
		for j := 1; ; j++ {
			k, ok := form[p+".Tag."+strconv.Itoa(j)+".Key"]
			if !ok {
				break
			}
			in.Tags[k[0]] = form.Get(p + ".Tag." + strconv.Itoa(j) + ".Value")
		}
	}
	for i := 1; ; i++ {
		p := "BlockDeviceMapping." + strconv.Itoa(i)
		dev, ok := form[p+".DeviceName"]
		if !ok {
			break
		}
		size, _ := strconv.Atoi(form.Get(p + ".Ebs.VolumeSize"))
		in.Devices[dev[0]] = size
	}
	s.instances = append(s.instances, in)
	if token != "" {
		s.tokens[token] = tokenUse{reservation: in.Reservation, params: params}
	}
	return s.reservation(in.Reservation, "RunInstancesResponse"), nil
}

// reservation is the RunInstances reply for a reservation.
func (s *Server) reservation(id, name string) any {
	r := &runReply{XMLName: xml.Name{Space: Namespace, Local: name}, RequestID: "req-run", ReservationID: id, OwnerID: "123456789012"}
	for _, in := range s.instances {
		if in.Reservation == id {
			r.Instances = append(r.Instances, toXML(in))
		}
	}
	return r
}

func (s *Server) describeInstances(form url.Values) (any, error) {
	ids := indexed(form, "InstanceId")
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
		if s.find(id) == nil {
			return nil, errorf(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
	}
	filters := map[string][]string{}
	for i := 1; ; i++ {
		p := "Filter." + strconv.Itoa(i)
		name, ok := form[p+".Name"]
		if !ok {
			break
		}
		filters[name[0]] = indexed(form, p+".Value")
	}
	var match []*Instance
	for _, in := range s.instances {
		if len(want) > 0 && !want[in.ID] {
			continue
		}
		s.advance(in)
		if matches(in, filters) {
			match = append(match, in)
		}
	}
	page, next, err := s.page(len(match), form)
	if err != nil {
		return nil, err
	}
	r := &describeInstances{RequestID: "req-describe", NextToken: next}
	for _, in := range match[page[0]:page[1]] {
		r.Reservations = append(r.Reservations, reservationXML{ID: in.Reservation, OwnerID: "123456789012", Instances: []instanceXML{toXML(in)}})
	}
	return r, nil
}

// advance moves an instance one step through its life.
func (s *Server) advance(in *Instance) {
	in.polls++
	switch in.State {
	case Pending:
		if in.polls > s.cfg.PendingPolls {
			in.State = Running
		}
	case ShuttingDown:
		in.State = Terminated
	}
}

func matches(in *Instance, filters map[string][]string) bool {
	for name, values := range filters {
		var have []string
		switch {
		case strings.HasPrefix(name, "tag:"):
			v, ok := in.Tags[strings.TrimPrefix(name, "tag:")]
			if !ok {
				return false
			}
			have = []string{v}
		case name == "tag-key":
			for k := range in.Tags {
				have = append(have, k)
			}
		case name == "instance-state-name":
			have = []string{in.State.Name}
		case name == "instance-id":
			have = []string{in.ID}
		default:
			return false
		}
		if !anyIn(have, values) {
			return false
		}
	}
	return true
}

func anyIn(have, values []string) bool {
	for _, h := range have {
		for _, v := range values {
			if h == v {
				return true
			}
		}
	}
	return false
}

// page picks the items of this page: [start, end) and the next token.
func (s *Server) page(n int, form url.Values) ([2]int, string, error) {
	start := 0
	if t := form.Get("NextToken"); t != "" {
		v, err := strconv.Atoi(strings.TrimPrefix(t, "page-"))
		if err != nil || v < 0 || v > n {
			return [2]int{}, "", errorf(400, "InvalidParameterValue", "Invalid NextToken %q", t)
		}
		start = v
	}
	size := s.cfg.PageSize
	if m, err := strconv.Atoi(form.Get("MaxResults")); err == nil && m > 0 && m < size {
		size = m
	}
	end := min(start+size, n)
	next := ""
	if end < n {
		next = "page-" + strconv.Itoa(end)
	}
	return [2]int{start, end}, next, nil
}

func (s *Server) find(id string) *Instance {
	for _, in := range s.instances {
		if in.ID == id {
			return in
		}
	}
	return nil
}

func (s *Server) terminateInstances(form url.Values) (any, error) {
	ids := indexed(form, "InstanceId")
	if len(ids) == 0 {
		return nil, errorf(400, "MissingParameter", "The request must contain the parameter InstanceId")
	}
	r := &terminateReply{RequestID: "req-terminate"}
	for _, id := range ids {
		if s.find(id) == nil {
			return nil, errorf(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		}
	}
	for _, id := range ids {
		in := s.find(id)
		prev := in.State
		if in.State != Terminated {
			in.State = ShuttingDown
		}
		r.Items = append(r.Items, stateChange{ID: id, Current: in.State, Previous: prev})
	}
	return r, nil
}

func (s *Server) describeImages() any {
	return &describeImages{RequestID: "req-images", Images: []imageXML{
		{ID: "ami-0debian12", Name: "debian-12-amd64", Description: "Debian 12 (bookworm)", Arch: "x86_64", State: "available", Owner: "136693071363"},
		{ID: "ami-0ubuntu2404", Name: "ubuntu-noble-24.04-amd64", Description: "Ubuntu 24.04", Arch: "x86_64", State: "available", Owner: "099720109477"},
	}}
}

// instanceTypes are the sizes the fake offers: vCPUs and MiB.
var instanceTypes = map[string][2]int{
	"t3.nano": {2, 512}, "t3.micro": {2, 1024}, "t3.small": {2, 2048}, "t3.medium": {2, 4096},
	"m5.large": {2, 8192}, "m5.xlarge": {4, 16384}, "c5.large": {2, 4096},
}

func (s *Server) describeInstanceTypes(form url.Values) (any, error) {
	names := make([]string, 0, len(instanceTypes))
	for n := range instanceTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	page, next, err := s.page(len(names), form)
	if err != nil {
		return nil, err
	}
	r := &describeTypes{RequestID: "req-types", NextToken: next}
	for _, n := range names[page[0]:page[1]] {
		t := instanceTypes[n]
		r.Types = append(r.Types, typeXML{Name: n, VCPUs: t[0], MiB: t[1]})
	}
	return r, nil
}

// The XML replies.

type runReply struct {
	XMLName       xml.Name
	RequestID     string        `xml:"requestId"`
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Instances     []instanceXML `xml:"instancesSet>item"`
}

type describeInstances struct {
	XMLName      xml.Name         `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeInstancesResponse"`
	RequestID    string           `xml:"requestId"`
	Reservations []reservationXML `xml:"reservationSet>item"`
	NextToken    string           `xml:"nextToken,omitempty"`
}

type reservationXML struct {
	ID        string        `xml:"reservationId"`
	OwnerID   string        `xml:"ownerId"`
	Instances []instanceXML `xml:"instancesSet>item"`
}

type instanceXML struct {
	ID          string   `xml:"instanceId"`
	Image       string   `xml:"imageId"`
	State       State    `xml:"instanceState"`
	KeyName     string   `xml:"keyName,omitempty"`
	Type        string   `xml:"instanceType"`
	Launch      string   `xml:"launchTime"`
	Zone        string   `xml:"placement>availabilityZone"`
	Subnet      string   `xml:"subnetId"`
	VPC         string   `xml:"vpcId"`
	PrivateIP   string   `xml:"privateIpAddress,omitempty"`
	PublicIP    string   `xml:"ipAddress,omitempty"`
	Groups      []group  `xml:"groupSet>item"`
	NICs        []nicXML `xml:"networkInterfaceSet>item"`
	Tags        []tagXML `xml:"tagSet>item"`
	ClientToken string   `xml:"clientToken,omitempty"`
}

type group struct {
	ID string `xml:"groupId"`
}

type nicXML struct {
	ID        string `xml:"networkInterfaceId"`
	MAC       string `xml:"macAddress"`
	PrivateIP string `xml:"privateIpAddress"`
}

type tagXML struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

func toXML(in *Instance) instanceXML {
	x := instanceXML{ID: in.ID, Image: in.Image, State: in.State, KeyName: in.KeyName, Type: in.Type,
		Launch: in.launch.Format(time.RFC3339), Zone: in.Zone, Subnet: in.Subnet, VPC: "vpc-0default", ClientToken: in.ClientToken}
	if in.State != Terminated {
		x.PrivateIP, x.PublicIP = in.PrivateIP, in.PublicIP
		x.NICs = []nicXML{{ID: "eni-" + in.ID[2:], MAC: in.MAC, PrivateIP: in.PrivateIP}}
	}
	if in.State == Pending {
		x.PublicIP = ""
	}
	for _, g := range in.SecurityGroups {
		x.Groups = append(x.Groups, group{ID: g})
	}
	keys := slices.Sorted(maps.Keys(in.Tags))
	for _, k := range keys {
		x.Tags = append(x.Tags, tagXML{k, in.Tags[k]})
	}
	return x
}

type terminateReply struct {
	XMLName   xml.Name      `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ TerminateInstancesResponse"`
	RequestID string        `xml:"requestId"`
	Items     []stateChange `xml:"instancesSet>item"`
}

type stateChange struct {
	ID       string `xml:"instanceId"`
	Current  State  `xml:"currentState"`
	Previous State  `xml:"previousState"`
}

type describeImages struct {
	XMLName   xml.Name   `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeImagesResponse"`
	RequestID string     `xml:"requestId"`
	Images    []imageXML `xml:"imagesSet>item"`
}

type imageXML struct {
	ID          string `xml:"imageId"`
	Name        string `xml:"name"`
	Description string `xml:"description"`
	Arch        string `xml:"architecture"`
	State       string `xml:"imageState"`
	Owner       string `xml:"imageOwnerId"`
}

type describeTypes struct {
	XMLName   xml.Name  `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeInstanceTypesResponse"`
	RequestID string    `xml:"requestId"`
	Types     []typeXML `xml:"instanceTypeSet>item"`
	NextToken string    `xml:"nextToken,omitempty"`
}

type typeXML struct {
	Name  string `xml:"instanceType"`
	VCPUs int    `xml:"vCpuInfo>defaultVCpus"`
	MiB   int    `xml:"memoryInfo>sizeInMiB"`
}

type describeRegions struct {
	XMLName xml.Name `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeRegionsResponse"`
	Regions []region `xml:"regionInfo>item"`
}

type region struct {
	Name     string `xml:"regionName"`
	Endpoint string `xml:"regionEndpoint"`
}

type describeZones struct {
	XMLName xml.Name `xml:"http://ec2.amazonaws.com/doc/2016-11-15/ DescribeAvailabilityZonesResponse"`
	Zones   []zone   `xml:"availabilityZoneInfo>item"`
}

type zone struct {
	Name   string `xml:"zoneName"`
	State  string `xml:"zoneState"`
	Region string `xml:"regionName"`
}
