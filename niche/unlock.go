package niche

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/assaykit/assay/internal/ids"
)

// MinUnlockKeyBytes is the shortest accepted unlock-token key.
const MinUnlockKeyBytes = 32

// DefaultUnlockTTL is how long an unlock token is valid by default.
const DefaultUnlockTTL = 15 * time.Minute

// unlockLabel separates unlock-token MACs from any other use of the key.
const unlockLabel = "assay/niche/unlock-token/v1\x00"

// maxTokenLen bounds the values Verify looks at.
const maxTokenLen = 256

var orderRefPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// UnlockSigner issues and verifies pay-per-call unlock tokens: compact
// values signed with HMAC-SHA256 and bound to one niche id,
//
//	v1.<nicheId>.<expiresUnix>.<orderRef>.<mac>
//
// where mac is the unpadded base64url HMAC-SHA256, under a key of at least
// 32 bytes used for nothing else, of "assay/niche/unlock-token/v1\x00"
// followed by the first four parts joined by dots. A token unlocks
// GET /v1/niches/{niche_id} for the niche it names until it expires;
// anything else (malformed, forged, expired, other niche) is ignored.
type UnlockSigner struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// UnlockOptions configure NewUnlockSigner. Nil means defaults.
type UnlockOptions struct {
	// TTL is the validity of issued tokens. Zero means DefaultUnlockTTL.
	TTL time.Duration
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// NewUnlockSigner returns a signer for key (at least MinUnlockKeyBytes
// bytes; the key is copied).
func NewUnlockSigner(key []byte, opts *UnlockOptions) (*UnlockSigner, error) {
	if len(key) < MinUnlockKeyBytes {
		return nil, fmt.Errorf("niche: unlock key has %d bytes, need at least %d", len(key), MinUnlockKeyBytes)
	}
	s := &UnlockSigner{key: append([]byte(nil), key...), ttl: DefaultUnlockTTL, now: time.Now}
	if opts != nil {
		if opts.TTL > 0 {
			s.ttl = opts.TTL
		}
		if opts.Now != nil {
			s.now = opts.Now
		}
	}
	return s, nil
}

// TTL returns the validity of issued tokens.
func (s *UnlockSigner) TTL() time.Duration { return s.ttl }

// SameKey reports, in constant time, whether key is the signer's key (the
// server refuses an unlock key equal to another configured secret).
func (s *UnlockSigner) SameKey(key []byte) bool {
	return subtle.ConstantTimeCompare(s.key, key) == 1
}

func (s *UnlockSigner) mac(payload string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(unlockLabel))
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Issue returns a token for nicheID, naming orderRef (the order or payment
// reference, [A-Za-z0-9_-]{1,64}; empty means "-"), and its expiry.
func (s *UnlockSigner) Issue(nicheID, orderRef string) (string, time.Time, error) {
	if !ids.Valid(ids.Niche, nicheID) {
		return "", time.Time{}, invalid("nicheId", "must be a niche id")
	}
	if orderRef == "" {
		orderRef = "-"
	} else if !orderRefPattern.MatchString(orderRef) {
		return "", time.Time{}, invalid("orderRef", "must be 1 to 64 characters of A-Z, a-z, 0-9, '_' or '-'")
	}
	exp := s.now().Add(s.ttl).Truncate(time.Second)
	payload := "v1." + nicheID + "." + strconv.FormatInt(exp.Unix(), 10) + "." + orderRef
	return payload + "." + s.mac(payload), exp.UTC(), nil
}

// Verify checks that token is a genuine, unexpired token for nicheID. It
// returns ErrInvalidToken otherwise. The MAC is compared in constant time.
func (s *UnlockSigner) Verify(token, nicheID string) error {
	_, err := s.Parse(token, nicheID)
	return err
}

// UnlockClaims are the contents of a verified token.
type UnlockClaims struct {
	NicheID   string
	ExpiresAt time.Time
	OrderRef  string
}

// Parse verifies token for nicheID like Verify and returns its contents.
func (s *UnlockSigner) Parse(token, nicheID string) (*UnlockClaims, error) {
	if len(token) == 0 || len(token) > maxTokenLen {
		return nil, ErrInvalidToken
	}
	parts := strings.Split(token, ".")
	if len(parts) != 5 || parts[0] != "v1" {
		return nil, ErrInvalidToken
	}
	payload := token[:strings.LastIndexByte(token, '.')]
	want := s.mac(payload)
	if subtle.ConstantTimeCompare([]byte(want), []byte(parts[4])) != 1 {
		return nil, ErrInvalidToken
	}
	if subtle.ConstantTimeCompare([]byte(parts[1]), []byte(nicheID)) != 1 {
		return nil, ErrInvalidToken
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return nil, ErrInvalidToken
	}
	expires := time.Unix(exp, 0).UTC()
	if !s.now().Before(expires) {
		return nil, ErrInvalidToken
	}
	return &UnlockClaims{NicheID: parts[1], ExpiresAt: expires, OrderRef: parts[3]}, nil
}

// MetaStore keeps instance-wide settings; *store.DB implements it, and
// metamem.Store in memory.
type MetaStore interface {
	// SetMetaOnce stores value under key unless a value is there and
	// returns the stored value.
	SetMetaOnce(ctx context.Context, key, value string) (string, error)
}

// Settings under which LoadOrCreateKey keeps generated keys.
const (
	// UnlockKeyMetaName holds the unlock-token key.
	UnlockKeyMetaName = "niche.unlock_key.v1"
	// QuotaKeyMetaName holds the key that pseudonymises client addresses
	// in free-search quotas.
	QuotaKeyMetaName = "niche.quota_key.v1"
)

// LoadOrCreateUnlockKey returns the unlock key kept in m, generating a
// random 32-byte key on first use. Instances sharing one database agree on
// the key. The key is used for unlock tokens only.
func LoadOrCreateUnlockKey(ctx context.Context, m MetaStore) ([]byte, error) {
	return LoadOrCreateKey(ctx, m, UnlockKeyMetaName)
}

// LoadOrCreateKey returns the 32-byte key kept in m under name, generating
// a random one on first use (SetMetaOnce makes concurrent first uses
// agree). Use one name per purpose: keys are never shared between uses.
func LoadOrCreateKey(ctx context.Context, m MetaStore, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("niche: key %s: %w", name, err)
	}
	v, err := m.SetMetaOnce(ctx, name, base64.RawURLEncoding.EncodeToString(fresh))
	if err != nil {
		return nil, fmt.Errorf("niche: key %s: %w", name, err)
	}
	key, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(key) < MinUnlockKeyBytes {
		return nil, errors.New("niche: the stored key " + name + " is malformed")
	}
	return key, nil
}
