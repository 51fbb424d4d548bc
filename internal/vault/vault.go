// Package vault keeps the tokens that backends' authorization servers issued to the gateway for
// its users (per-user OAuth, docs/user-oauth.md): one sealed record per caller (issuer and
// subject) and backend, in the shared store (internal/store Records: Redis when scaled out,
// memory otherwise).
//
// A record is sealed with AES-256-GCM under a key derived once from a configured secret; the key
// id travels in front of each record, so keys rotate: the newest seals, every configured key
// opens, and a record read under an older key is sealed again under the newest. The associated
// data binds the record to its owner and backend, so a record copied under another caller or
// another backend in the store does not open. What one caller holds is bounded: a record per
// backend, each at most MaxRecordBytes, each living RecordIdle after its last use and at most
// RecordMaxAge after its consent (the store removes it then, read or not).
//
// The vault never logs a record, a token or the identity it is stored under (the owner in the
// store is a digest of the issuer and subject).
package vault

import (
	"cmp"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
)

// Defaults and bounds of Config.
const (
	// DefaultMaxRecordBytes bounds one sealed record: a JWT access token, a refresh token and a
	// few names fit many times over.
	DefaultMaxRecordBytes = 16 << 10
	// MaxMaxRecordBytes bounds Config.MaxRecordBytes.
	MaxMaxRecordBytes = 1 << 20
	// DefaultRecordIdle is how long a record stays unused (no call with its token, no refresh)
	// before it goes: a caller deleted at the identity provider can no longer call, so its
	// tokens leave the vault within this; a person back after longer connects again, one click.
	DefaultRecordIdle = 30 * 24 * time.Hour
	// DefaultRecordMaxAge is how long a record lives after its consent, however much it is
	// used: the user consents again twice a year, so a grant nobody reviews does not live for
	// ever, and a record's whole life is bounded even for a caller whose tokens are still used.
	DefaultRecordMaxAge = 180 * 24 * time.Hour
	// MinRecordLife bounds RecordIdle and RecordMaxAge from below: a record must outlive the
	// refreshes of its access token.
	MinRecordLife = time.Hour
	// lockPrefix keys the refresh locks in the shared store.
	lockPrefix = "vault refresh lock\x00"
	// hkdfSalt separates the vault's keys from any other use of the same secret.
	hkdfSalt = "mcp-gateway/vault/v1"
	// recordVersion prefixes every record.
	recordVersion = "v1."
)

// Errors of the vault. Every failure of the shared store also wraps store.ErrUnavailable.
var (
	// ErrNotFound: the caller has no record for the backend.
	ErrNotFound = errors.New("vault: no token for this caller and backend")
	// ErrUnreadable: a record is there but does not open (a key no longer configured, a record
	// moved or altered in the store). The caller removes it and asks for consent again.
	ErrUnreadable = errors.New("vault: record does not open")
	// ErrKeyNotHeld, beside ErrUnreadable: the record is sealed under a key this vault does not
	// hold, one removed or one newer than its configuration (a rollout adding a key, where
	// other replicas hold it and use the record). The caller leaves it in place.
	ErrKeyNotHeld = errors.New("vault: record sealed under a key not held")
	// ErrFull: the caller already holds its budget of records.
	ErrFull = errors.New("vault: the caller holds its budget of tokens")
	// ErrTooLarge: the tokens do not fit MaxRecordBytes.
	ErrTooLarge = errors.New("vault: tokens too large for a record")
	// ErrExists: Add found a record there already.
	ErrExists = errors.New("vault: a record is there already")
)

// Config is the vault's keys and bounds.
type Config struct {
	// Keys seal and open the records, oldest first: the last that is not OpenOnly seals, every
	// one opens. Each secret is at least 32 bytes; ids are 1 to 32 characters of [A-Za-z0-9_-].
	Keys []seal.Key
	// MaxRecordBytes bounds one sealed record. Zero means DefaultMaxRecordBytes.
	MaxRecordBytes int
	// MaxRecordsPerSubject bounds the records of one caller: the number of per-user backends.
	// At least 1.
	MaxRecordsPerSubject int
	// RecordIdle is how long a record lives unused (a call with its token or a refresh is a
	// use); RecordMaxAge how long it lives after its consent. Zero means DefaultRecordIdle,
	// DefaultRecordMaxAge.
	RecordIdle, RecordMaxAge time.Duration
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	if err := (seal.Config{Keys: c.Keys}).Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxRecordBytes < 0 || c.MaxRecordBytes > MaxMaxRecordBytes {
		errs = append(errs, fmt.Errorf("vault: maxRecordBytes %d: want 0 to %d", c.MaxRecordBytes, MaxMaxRecordBytes))
	}
	if c.MaxRecordsPerSubject < 1 {
		errs = append(errs, fmt.Errorf("vault: maxRecordsPerSubject %d: want at least 1", c.MaxRecordsPerSubject))
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"recordIdle", c.RecordIdle}, {"recordMaxAge", c.RecordMaxAge}} {
		if d.v != 0 && d.v < MinRecordLife {
			errs = append(errs, fmt.Errorf("vault: %s %s: want 0 (default) or at least %s", d.key, d.v, MinRecordLife))
		}
	}
	return errors.Join(errs...)
}

// Caller is who a record belongs to: a verified principal's issuer and subject.
type Caller struct {
	Issuer, Subject string
}

// Owner is the caller's name in the store: a digest of issuer and subject, so identities are not
// kept in clear and one caller's records are grouped. Issuer and subject are joined by NUL, which
// no issuer holds (authz refuses an issuer URL with a control character), so no two callers share
// an owner whatever their subjects hold. It is not a digest of callerkey.Of: every record stored
// is named this way, and another spelling would orphan every user's stored tokens (each would
// have to connect again) at the next rolling update.
type Owner string

// Owner returns c's name in the store.
func (c Caller) Owner() Owner {
	sum := sha256.Sum256([]byte("vault owner\x00" + c.Issuer + "\x00" + c.Subject))
	return Owner(base64.RawURLEncoding.EncodeToString(sum[:]))
}

// Token is what one record holds: the tokens an authorization server issued for one caller and
// backend, and what they were issued for.
type Token struct {
	// Issuer and Subject are the caller's, checked again when the record opens.
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
	// Backend is the backend name; Resource the RFC 8707 resource the tokens are for (the
	// backend's URL when they were issued). A token is sent only to a backend of that name
	// and resource.
	Backend  string `json:"be"`
	Resource string `json:"res"`
	// AuthServer is the issuer of the authorization server; ClientID the gateway's client
	// there (refresh and revocation must use the same).
	AuthServer string `json:"as"`
	ClientID   string `json:"cid"`
	// AccessToken and RefreshToken are the tokens; Expiry the access token's, zero when the
	// authorization server did not say.
	AccessToken  string    `json:"at"`
	RefreshToken string    `json:"rt,omitempty"`
	Expiry       time.Time `json:"exp,omitzero"`
	// Scope is the scope granted, as the authorization server said it.
	Scope string `json:"scope,omitempty"`
	// Connected is when the user consented; Refreshed when the tokens were last refreshed.
	Connected time.Time `json:"ct"`
	Refreshed time.Time `json:"rf,omitzero"`
	// Refused is when the backend last refused an access token of this record (HTTP 401).
	Refused time.Time `json:"rj,omitzero"`
}

// Entry is a record as read: its token and the sealed bytes, which SwapToken and Delete
// compare against so they change only the record that was read.
type Entry struct {
	Token
	raw []byte
	// Stale is set when the record was sealed under another key than the one that seals (an
	// older one, or one now open-only): sealing it again moves it to the one that seals.
	Stale bool
}

// Vault seals, stores and opens token records. It is safe for concurrent use.
type Vault struct {
	recs  store.Records
	locks store.Store
	keys  []vaultKey // oldest first
	// sealing is the index in keys of the key that seals: the newest that is not open-only.
	sealing int
	budget  store.Budget
	// maxRecord bounds one sealed record.
	maxRecord int
	// idle and maxAge are the records' lifetimes (Config.RecordIdle, RecordMaxAge).
	idle, maxAge time.Duration
	now          func() time.Time
}

// life is the records' lifetimes as of now.
func (v *Vault) life() store.RecordLife {
	return store.RecordLife{Now: v.now(), Idle: v.idle, Absolute: v.maxAge}
}

type vaultKey struct {
	id   string
	aead cipher.AEAD
}

// New derives the keys of cfg (once, here) and returns the vault over recs; locks keeps the
// refresh locks (any store shared by the replicas).
func New(cfg Config, recs store.Records, locks store.Store, now func() time.Time) (*Vault, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if recs == nil || locks == nil {
		return nil, errors.New("vault: a records store and a lock store are required")
	}
	if now == nil {
		now = time.Now
	}
	maxBytes := cfg.MaxRecordBytes
	if maxBytes == 0 {
		maxBytes = DefaultMaxRecordBytes
	}
	v := &Vault{recs: recs, locks: locks, now: now, maxRecord: maxBytes,
		idle: cmp.Or(cfg.RecordIdle, DefaultRecordIdle), maxAge: cmp.Or(cfg.RecordMaxAge, DefaultRecordMaxAge),
		budget: store.Budget{Count: cfg.MaxRecordsPerSubject, Bytes: int64(maxBytes) * int64(cfg.MaxRecordsPerSubject)}}
	for _, k := range cfg.Keys {
		key, err := hkdf.Key(sha256.New, k.Secret, []byte(hkdfSalt), "token records", 32)
		if err != nil {
			return nil, err
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		if !k.OpenOnly {
			v.sealing = len(v.keys)
		}
		v.keys = append(v.keys, vaultKey{id: k.ID, aead: aead})
	}
	return v, nil
}
