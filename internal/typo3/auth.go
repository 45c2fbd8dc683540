package typo3

import (
	"context"
	"errors"
	"fmt"

	"github.com/t3agent/t3agent/internal/typo3/password"
)

// ErrAuthFailed is the one answer to a wrong username, a wrong password
// and a user who cannot act, so a login form does not reveal which
// usernames exist.
var ErrAuthFailed = errors.New("wrong username or password")

// AuthFailure is ErrAuthFailed with why, for logs and metrics only: its
// message is ErrAuthFailed's, so no answer tells which usernames exist.
type AuthFailure struct {
	// Inactive says why the user cannot act (ReasonUnknown for a
	// username no backend user has); empty for a wrong password.
	Inactive InactiveReason
}

func (e *AuthFailure) Error() string        { return ErrAuthFailed.Error() }
func (e *AuthFailure) Is(target error) bool { return target == ErrAuthFailed }

// ErrPasswordHashUnusable marks a login refused because of how the
// account's password is stored, not because the password is wrong. The
// error text explains what to do.
var ErrPasswordHashUnusable = errors.New("this account's stored password cannot be used to log in to t3agent")

// acceptedHash reports whether the product accepts alg for login
// (SPEC §1). The password package can also check phpass, plain-crypt
// blowfish and md5-crypt; those legacy formats are refused here.
func acceptedHash(alg string) bool {
	switch alg {
	case password.Argon2i, password.Argon2id, password.Bcrypt, password.PBKDF2SHA256:
		return true
	}
	return false
}

// timingHash is an Argon2id hash, with TYPO3's default cost, of a random
// password nobody knows. Checking it when the username is unknown or
// cannot act makes those answers take as long as a wrong password.
const timingHash = "$argon2id$v=19$m=65536,t=16,p=1$hoB++6vgLYkJfbRFRKXhHg$DIJdjIZGhRNlUhqL1SJMEYO2Ndj9uM9FZ+IK/eOjicE"

// Authenticate checks a backend login and returns the user loaded for
// acting. A wrong username, a wrong password and an inactive user all give
// ErrAuthFailed. When the stored hash cannot be checked at all, or the
// password is right but stored in a legacy format t3agent refuses, the
// error matches ErrPasswordHashUnusable and says what to do; the legacy
// case is only revealed to someone who knows the password.
func (s *Site) Authenticate(ctx context.Context, username, pw string) (*BackendUser, error) {
	if username == "" || pw == "" {
		return nil, ErrAuthFailed
	}
	row, err := s.actingUserRow(ctx, "username", username)
	if errors.Is(err, ErrUserCannotAct) {
		_, _ = password.Verify(timingHash, pw)
		reason := ReasonUnknown
		if ce := (*CannotActError)(nil); errors.As(err, &ce) {
			reason = ce.Reason
		}
		return nil, &AuthFailure{Inactive: reason}
	}
	if err != nil {
		return nil, err
	}
	ok, err := password.Verify(row.password, pw)
	var hashErr *password.HashError
	switch {
	case errors.As(err, &hashErr):
		return nil, fmt.Errorf("%w: %w", ErrPasswordHashUnusable, hashErr)
	case errors.Is(err, password.ErrPasswordTooLong):
		return nil, ErrAuthFailed
	case err != nil:
		return nil, fmt.Errorf("check password: %w", err)
	case !ok:
		return nil, ErrAuthFailed
	}
	if alg, _ := password.Algorithm(row.password); !acceptedHash(alg) {
		return nil, fmt.Errorf("%w: the password is stored as a legacy %s hash, which t3agent refuses; "+
			"log in to the TYPO3 backend once (TYPO3 then stores it as Argon2id) or reset the password", ErrPasswordHashUnusable, alg)
	}
	return s.buildUser(ctx, row)
}
