package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/brinehq/brine/cloud"
	"github.com/brinehq/brine/cloud/ec2/ec2test"
	"github.com/brinehq/brine/deploy/sshdtest"
)

// TestCloudDeployOverSSH runs `brine cloud -p` end to end: a simulator VM
// whose guest IP is 127.0.0.1, a real sshd there, the deploy script run
// over SSH, and salt-cloud's full event sequence through the master.
func TestCloudDeployOverSSH(t *testing.T) {
	srv := sshdtest.Start(t)
	m := newTestMaster(t)
	m.start()
	cloudSetup(t, m, true)
	script, err := os.ReadFile("../testdata/deploy/hello.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"cloud.deploy.d", "cloud.profiles.d"} {
		if err := os.MkdirAll(filepath.Join(m.confDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(m.confDir, "cloud.deploy.d", "hello.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	const token = "tok-e2e-secret-4711"
	profile := fmt.Sprintf(`deployed:
  provider: vcsim
  clonefrom: linux-template
  wait_for_ip_timeout: 30
  extra_config: {SET.guest.ipAddress: 127.0.0.1}
  script: hello
  script_args: --role web
  script_env: {ROLE: web, DEPLOY_TOKEN: %s}
  ssh_username: [nobody-here, root]
  ssh_port: %d
  private_key: %s
  ssh_connect_timeout: 60
`, token, srv.Port, srv.KeyFile)
	if err := os.WriteFile(filepath.Join(m.confDir, "cloud.profiles.d", "deploy.conf"), []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errs, code := m.run(simEnv, "cloud", "--json", "-v", "-p", "deployed", "web1")
	var res resultsJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Results) != 1 || res.Results[0].Status != cloud.Created {
		t.Fatalf("create: exit %d, %s\nstderr: %s\nsshd: %s", code, out, errs, srv.Log)
	}
	t.Logf("brine cloud -p on vSphere with deploy: %s", res.Results[0].Elapsed)
	if !strings.Contains(errs, "web1: hello from root in /tmp/.brine-deploy-") || !strings.Contains(errs, "web1: args: --role web") {
		t.Errorf("--verbose does not show the script's output:\n%s", errs)
	}
	kh, err := os.ReadFile(filepath.Join(m.dataDir, "known_hosts"))
	if err != nil || !strings.Contains(string(kh), fmt.Sprintf("[127.0.0.1]:%d ssh-ed25519 ", srv.Port)) {
		t.Errorf("known_hosts in the data dir: %q, %v", kh, err)
	}

	events, werrs, code := m.run(nil, "event", "watch", "salt/cloud/web1/*", "--since", "1h", "--count", "7")
	if code != 0 {
		t.Fatalf("watch: exit %d: %s", code, werrs)
	}
	var tasks []string
	for _, l := range strings.Split(strings.TrimSpace(events), "\n") {
		tag, payload, _ := strings.Cut(l, "\t")
		tasks = append(tasks, strings.TrimPrefix(tag, "salt/cloud/web1/"))
		var data map[string]any
		if err := json.Unmarshal([]byte(payload), &data); err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		switch tag {
		case "salt/cloud/web1/waiting_for_ssh":
			if data["ip_address"] != "127.0.0.1" {
				t.Errorf("waiting_for_ssh %v", data)
			}
		case "salt/cloud/web1/deploying":
			if data["event"] != "executing deploy script" {
				t.Errorf("deploying %v", data)
			}
		case "salt/cloud/web1/deploy_script":
			if data["host"] != "127.0.0.1" || data["name"] != "web1" || data["event"] != "web1 has been deployed at 127.0.0.1" {
				t.Errorf("deploy_script %v", data)
			}
		case "salt/cloud/web1/created":
			if data["ip_address"] != "127.0.0.1" {
				t.Errorf("created %v", data)
			}
		}
	}
	want := "creating requesting querying waiting_for_ssh deploying deploy_script created"
	if got := strings.Join(tasks, " "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	m.stop(syscall.SIGTERM) // its log is complete once it has stopped
	for where, text := range map[string]string{"events": events, "--json output": out, "stderr": errs, "master log": m.log.String()} {
		for _, secret := range []string{token, strings.TrimSpace(srv.KeyPEM)} {
			if strings.Contains(text, secret) {
				t.Errorf("a secret appears in the %s", where)
			}
		}
	}
}

// TestCloudEC2DeployOverSSH runs `brine cloud -p` and `-d` against the fake
// EC2 endpoint, whose instances' address is 127.0.0.1 where a real sshd
// listens: the EC2 driver, the deploy step and the events end to end.
func TestCloudEC2DeployOverSSH(t *testing.T) {
	srv := sshdtest.Start(t)
	const access, secret = "AKIDE2ETEST", "e2e/secret+access+key+4242"
	fake := ec2test.New(ec2test.Config{AccessKey: access, SecretKey: secret, IP: "127.0.0.1"})
	defer fake.Close()
	m := newTestMaster(t)
	m.start()
	script, err := os.ReadFile("../testdata/deploy/hello.sh")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"cloud.deploy.d/hello.sh": string(script),
		"cloud.providers": fmt.Sprintf(`aws:
  driver: ec2
  id: %s
  key: sdb://osenv/TEST_AWS_SECRET
  keyname: brine
  location: eu-west-1
  endpoint: %s
  securitygroup: default
  ssh_interface: private_ips
  private_key: %s
`, access, fake.URL, srv.KeyFile),
		"cloud.profiles": fmt.Sprintf(`micro:
  provider: aws
  image: ami-0debian12
  size: t3.micro
  wait_for_ip_interval: 0.1
  script: hello
  ssh_username: [admin, root]
  ssh_port: %d
  ssh_connect_timeout: 60
`, srv.Port),
	}
	for name, content := range files {
		p := filepath.Join(m.confDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"TEST_AWS_SECRET=" + secret}
	out, errs, code := m.run(env, "cloud", "--json", "-p", "micro", "ec2web")
	var res resultsJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Results) != 1 || res.Results[0].Status != cloud.Created {
		t.Fatalf("create: exit %d, %s\nstderr: %s", code, out, errs)
	}
	id := res.Results[0].Node.ID
	t.Logf("brine cloud -p on EC2 with deploy: %s", res.Results[0].Elapsed)
	known := filepath.Join(m.dataDir, "known_hosts")
	if kh, err := os.ReadFile(known); err != nil || !strings.Contains(string(kh), fmt.Sprintf("[127.0.0.1]:%d ", srv.Port)) {
		t.Errorf("known_hosts after create: %q, %v", kh, err)
	}
	dout, derrs, code := m.run(env, "cloud", "--json", "-d", "-y", "ec2web")
	if code != 0 || !strings.Contains(dout, `"status":"destroyed"`) {
		t.Fatalf("destroy: exit %d, %s\nstderr: %s", code, dout, derrs)
	}
	// The destroyed VM's host key is forgotten: a VM made again at its
	// address will not be refused.
	if kh, err := os.ReadFile(known); err != nil || strings.Contains(string(kh), "127.0.0.1") {
		t.Errorf("known_hosts after destroy: %q, %v", kh, err)
	}
	if insts := fake.Instances(); len(insts) != 1 || insts[0].State != ec2test.Terminated || insts[0].Tags["Name"] != "ec2web" {
		t.Errorf("instances %+v", insts)
	}

	events, werrs, code := m.run(nil, "event", "watch", "salt/cloud/ec2web/*", "--since", "1h", "--count", "9")
	if code != 0 {
		t.Fatalf("watch: exit %d: %s", code, werrs)
	}
	var tasks []string
	for _, l := range strings.Split(strings.TrimSpace(events), "\n") {
		tag, payload, _ := strings.Cut(l, "\t")
		task := strings.TrimPrefix(tag, "salt/cloud/ec2web/")
		tasks = append(tasks, task)
		var data map[string]any
		if err := json.Unmarshal([]byte(payload), &data); err != nil {
			t.Fatalf("%s: %v", tag, err)
		}
		switch task {
		case "querying", "created", "destroying", "destroyed":
			if data["instance_id"] != id {
				t.Errorf("%s lacks instance_id %s: %v", task, id, data)
			}
		case "deploy_script":
			if data["host"] != "127.0.0.1" {
				t.Errorf("deploy_script %v", data)
			}
		}
	}
	want := "creating requesting querying waiting_for_ssh deploying deploy_script created destroying destroyed"
	if got := strings.Join(tasks, " "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	m.stop(syscall.SIGTERM)
	for where, text := range map[string]string{"events": events, "--json output": out + dout, "stderr": errs + derrs, "master log": m.log.String()} {
		for _, s := range []string{secret, access, strings.TrimSpace(srv.KeyPEM)} {
			if strings.Contains(text, s) {
				t.Errorf("a secret appears in the %s", where)
			}
		}
	}
}
