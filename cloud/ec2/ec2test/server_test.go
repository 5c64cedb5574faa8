package ec2test_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	"github.com/brinehq/brine/cloud/ec2/ec2test"
)

func client(srv *ec2test.Server, secret string) *ec2.Client {
	return ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", secret, ""), RetryMaxAttempts: 1})
}

func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func run(ctx context.Context, c *ec2.Client, token, itype string) (*ec2.RunInstancesOutput, error) {
	return c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-1"), InstanceType: types.InstanceType(itype),
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ClientToken: aws.String(token),
		TagSpecifications: []types.TagSpecification{{ResourceType: types.ResourceTypeInstance, Tags: []types.Tag{{Key: aws.String("role"), Value: aws.String("web")}}}}})
}

// TestLifecycleAsTheSDKSeesIt drives the fake with the unmodified SDK:
// states over polls, tokens, filters, errors, signatures.
func TestLifecycleAsTheSDKSeesIt(t *testing.T) {
	srv := ec2test.New(ec2test.Config{AccessKey: "AKID", SecretKey: "s3cr3t", PendingPolls: 2})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := client(srv, "s3cr3t")

	out, err := run(ctx, c, "tok-1", "t3.micro")
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(out.Instances[0].InstanceId)
	if out.Instances[0].State.Name != types.InstanceStateNamePending || aws.ToInt32(out.Instances[0].State.Code) != 0 {
		t.Errorf("new instance state %+v", out.Instances[0].State)
	}
	// The same token: the same reservation; with other parameters: refused.
	again, err := run(ctx, c, "tok-1", "t3.micro")
	if err != nil || aws.ToString(again.Instances[0].InstanceId) != id {
		t.Errorf("same token: %v, %v", again, err)
	}
	if _, err := run(ctx, c, "tok-1", "t3.small"); code(err) != "IdempotentParameterMismatch" {
		t.Errorf("token reused with another size: %v", err)
	}
	// pending (2 polls) → running 16.
	var states []string
	for range 3 {
		d, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, string(d.Reservations[0].Instances[0].State.Name))
	}
	if want := "pending pending running"; strings.Join(states, " ") != want {
		t.Errorf("states %s, want %s", strings.Join(states, " "), want)
	}
	// Tag filters.
	f, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []types.Filter{{Name: aws.String("tag:role"), Values: []string{"db"}}}})
	if err != nil || len(f.Reservations) != 0 {
		t.Errorf("tag:role=db matched %d, %v", len(f.Reservations), err)
	}
	// running → shutting-down 32 → terminated 48.
	term, err := c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if err != nil || term.TerminatingInstances[0].CurrentState.Name != types.InstanceStateNameShuttingDown ||
		term.TerminatingInstances[0].PreviousState.Name != types.InstanceStateNameRunning {
		t.Fatalf("terminate: %+v, %v", term, err)
	}
	d, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || aws.ToInt32(d.Reservations[0].Instances[0].State.Code) != 48 {
		t.Errorf("after terminate: %v", err)
	}
	// Unknown ids, bad signatures, throttling.
	if _, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0nope"}}); code(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := client(srv, "wrong").DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); code(err) != "AuthFailure" {
		t.Errorf("wrong secret: %v", err)
	}
	srv.Throttle(1)
	if _, err := c.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); code(err) != "RequestLimitExceeded" {
		t.Errorf("throttled: %v", err)
	}
	if _, err := c.DescribeRegions(ctx, &ec2.DescribeRegionsInput{}); err != nil {
		t.Errorf("after the throttle: %v", err)
	}
}
