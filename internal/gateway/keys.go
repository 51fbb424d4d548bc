package gateway

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/mrtr"
)

// MRTRConfig is the `mrtr:` block: the keys that seal requestState and list cursors.
type MRTRConfig struct {
	// Keys seal and open tokens, oldest first: the last one that is not openOnly seals, all
	// open. Each secret is at least 32 bytes of random text (for example `head -c 32
	// /dev/urandom | base64`). Every replica needs the same keys. Empty: one random key per
	// process, which is only correct for a single replica and loses in-flight confirmations on
	// restart.
	Keys []KeyConfig `yaml:"keys"`
	// TTL is how long a requestState stays valid. Default 10m.
	TTL time.Duration `yaml:"ttl"`
	// MaxTokenBytes bounds a requestState or cursor, checked before any decoding. Default 8 KiB.
	MaxTokenBytes int `yaml:"maxTokenBytes"`
	// MaxAnswersPerCaller bounds the rounds one caller (issuer and subject; without
	// authentication, one client address) may answer per TTL and 30 seconds: confirmations,
	// backend round trips and approvals each leave a replay record in the shared store until
	// 30 seconds after their requestState expires (replicas' clocks may differ by that much).
	// Past it a retry is refused with 429
	// (-32012, Retry-After), nothing is run and nothing recorded. Default 10000; at most 1000000.
	MaxAnswersPerCaller int `yaml:"maxAnswersPerCaller"`
}

// KeyConfig is one sealing key.
type KeyConfig struct {
	// ID names the key inside tokens: 1–32 characters of [A-Za-z0-9_-].
	ID string `yaml:"id"`
	// Secret is the key material.
	Secret Secret `yaml:"secret"`
	// OpenOnly makes the key open tokens without sealing any: the first step of a rotation
	// across replicas (docs/deploy.md), so that every replica can open what the new key will
	// seal before any replica seals with it. At least one key must seal. Default false.
	OpenOnly bool `yaml:"openOnly"`
}

// sealKeys checks that a list of keys has one that seals, reported at path.
func sealKeys(path string, keys []KeyConfig) []error {
	for _, k := range keys {
		if !k.OpenOnly {
			return nil
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return []error{configerr.At(path, "every key is openOnly: one must seal (the newest without openOnly seals)")}
}

// validate checks the keys' ids and the settings; the secrets are checked with every other
// secret (secretRefs), their length once they are read (checkKeyLengths).
func (c MRTRConfig) validate() []error {
	var errs []error
	seen := map[string]int{}
	for i, k := range c.Keys {
		at := fmt.Sprintf("mrtr.keys[%d].id", i)
		if !seal.ValidKeyID(k.ID) {
			errs = append(errs, configerr.At(at, "%q: want 1 to %d characters of [A-Za-z0-9_-]", k.ID, seal.MaxKeyIDBytes))
		} else if first, dup := seen[k.ID]; dup {
			errs = append(errs, configerr.At(at, "%q is also the id of mrtr.keys[%d]; ids are unique", k.ID, first))
		} else {
			seen[k.ID] = i
		}
	}
	errs = append(errs, sealKeys("mrtr.keys", c.Keys)...)
	if err := (mrtr.Config{TTL: c.TTL}).Validate(); err != nil {
		errs = append(errs, configerr.At("mrtr.ttl", "%s: want %s to %s", c.TTL, mrtr.MinTTL, mrtr.MaxTTL))
	}
	if err := (mrtr.Config{MaxAnswersPerCaller: c.MaxAnswersPerCaller}).Validate(); err != nil {
		errs = append(errs, configerr.At("mrtr.maxAnswersPerCaller", "%d: want 0 (the default, %d) to %d",
			c.MaxAnswersPerCaller, mrtr.DefaultMaxAnswersPerCaller, mrtr.MaxMaxAnswersPerCaller))
	}
	if c.MaxTokenBytes < 0 {
		errs = append(errs, configerr.At("mrtr.maxTokenBytes", "must not be negative"))
	}
	return errs
}

// keyRing builds the ring once at start-up: key derivation never happens per request.
func (c MRTRConfig) keyRing(getenv func(string) string) (ring *seal.KeyRing, ephemeral bool, err error) {
	cfg := seal.Config{MaxTokenBytes: c.MaxTokenBytes}
	for i, k := range c.Keys {
		v, err := k.Secret.resolve(getenv)
		if err != nil {
			return nil, false, fmt.Errorf("mrtr.keys[%d].secret: %w", i, err)
		}
		cfg.Keys = append(cfg.Keys, seal.Key{ID: k.ID, Secret: []byte(v), OpenOnly: k.OpenOnly})
	}
	if len(cfg.Keys) == 0 {
		secret := make([]byte, seal.MinSecretBytes)
		if _, err := rand.Read(secret); err != nil {
			return nil, false, err
		}
		cfg.Keys = []seal.Key{{ID: "process", Secret: secret}}
		ephemeral = true
	}
	ring, err = seal.New(cfg)
	if err != nil {
		return nil, false, errors.Join(errors.New("mrtr.keys"), err)
	}
	return ring, ephemeral, nil
}
