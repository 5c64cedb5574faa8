package ec2

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/brinehq/brine/cloud"
)

// Errors the driver reports beyond cloud's; test them with errors.Is.
var (
	// ErrAuth: EC2 refused the credentials or the operation.
	ErrAuth = errors.New("EC2 refused the credentials")
	// ErrThrottled: EC2 kept throttling after every retry.
	ErrThrottled = errors.New("EC2 throttled the requests")
	// ErrTokenMismatch: the VM's client token was used for another
	// request (the profile changed since an interrupted create).
	ErrTokenMismatch = errors.New("client token already used with other parameters")
)

// explain turns an SDK error into one that says what to do, keeping the
// original wrapped (errors.As still finds the smithy.APIError).
func explain(what string, err error) error {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", what, err)
	}
	code := ae.ErrorCode()
	var sentinel error
	hint := ""
	switch code {
	case "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed":
		sentinel = cloud.ErrNotFound
	case "AuthFailure", "UnauthorizedOperation", "InvalidClientTokenId", "SignatureDoesNotMatch", "OptInRequired", "Blocked":
		sentinel, hint = ErrAuth, " (check the provider's id and key, or the AWS credential chain, and the IAM policy)"
	case "RequestLimitExceeded", "Throttling", "ThrottlingException":
		sentinel, hint = ErrThrottled, " (retried with backoff; lower --parallel or raise max_attempts)"
	case "IdempotentParameterMismatch":
		sentinel, hint = ErrTokenMismatch, " (an interrupted create of this VM asked for other settings: destroy what it made, or restore the profile)"
	}
	var me *retry.MaxAttemptsError
	if errors.As(err, &me) {
		hint += fmt.Sprintf(" after %d attempts", me.Attempt)
	}
	if sentinel == nil {
		return fmt.Errorf("%s: EC2 said %s: %s: %w", what, code, ae.ErrorMessage(), err)
	}
	return &apiError{msg: fmt.Sprintf("%s: %v: %s: %s%s", what, sentinel, code, ae.ErrorMessage(), hint), kind: sentinel, err: err}
}

// apiError is an explained EC2 error: it matches its kind (errors.Is) and
// still holds the SDK's error (errors.As).
type apiError struct {
	msg  string
	kind error
	err  error
}

func (e *apiError) Error() string   { return e.msg }
func (e *apiError) Unwrap() []error { return []error{e.kind, e.err} }
