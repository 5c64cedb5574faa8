package ec2

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/brinehq/brine/cloud"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		code string
		kind error
		want string
	}{
		{"InvalidInstanceID.NotFound", cloud.ErrNotFound, "TerminateInstances: not found: InvalidInstanceID.NotFound: msg"},
		{"AuthFailure", ErrAuth, "check the provider's id and key"},
		{"UnauthorizedOperation", ErrAuth, "IAM policy"},
		{"RequestLimitExceeded", ErrThrottled, "lower --parallel or raise max_attempts"},
		{"IdempotentParameterMismatch", ErrTokenMismatch, "an interrupted create of this VM asked for other settings"},
		{"InsufficientInstanceCapacity", nil, "TerminateInstances: EC2 said InsufficientInstanceCapacity: msg"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			sdkErr := &smithy.GenericAPIError{Code: tc.code, Message: "msg"}
			err := explain("TerminateInstances", sdkErr)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q lacks %q", err, tc.want)
			}
			if tc.kind != nil && !errors.Is(err, tc.kind) {
				t.Errorf("%v does not match %v", err, tc.kind)
			}
			var ae smithy.APIError
			if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
				t.Errorf("the SDK's error is lost: %v", err)
			}
		})
	}
}

func TestClientToken(t *testing.T) {
	a := ClientToken("aws", "us-east-1", "web1")
	if a != ClientToken("aws", "us-east-1", "web1") {
		t.Error("not deterministic")
	}
	if len(a) > 64 {
		t.Errorf("%d bytes; EC2 allows 64", len(a))
	}
	for _, other := range []string{ClientToken("aws2", "us-east-1", "web1"), ClientToken("aws", "eu-west-1", "web1"),
		ClientToken("aws", "us-east-1", "web2"), ClientToken("aw", "s\x00us-east-1", "web1")} {
		if other == a {
			t.Errorf("%s is shared by two VMs", a)
		}
	}
}
