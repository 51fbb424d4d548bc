package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/certreload"
	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/pins"
	"github.com/mcp-gateway/gateway/internal/seal"
)

// preflight is every check serve makes before it binds a port, reporting every problem at once:
// the configuration's own validation and everything it needs from this machine (each secret
// readable from its file or variable, the sealing keys long enough, the TLS certificate and key,
// the pins lock file covering every backend it pins). It connects to nothing. serve runs it
// before building anything, check-config runs it and stops, and a reload runs it on the new file
// before swapping: what check-config accepts, serve starts with.
func (c *Config) preflight(getenv func(string) string) error {
	return c.check(getenv, checkMachine)
}

// checkScope is what a check reads besides the settings themselves.
type checkScope int

const (
	// checkSettings reads nothing: check-config --static, for a file rendered for another
	// machine.
	checkSettings checkScope = iota
	// checkMachine reads every secret, TLS file and the pins lock file: serve's preflight.
	checkMachine
	// checkMachineButLock reads all but the pins lock file, which pins write makes (the file
	// may not exist yet, or lack a backend just added) and pins diff compares with another.
	checkMachineButLock
)

// check validates c and reads, on this machine, what scope says (files and environment
// variables).
func (c *Config) check(getenv func(string) string, scope checkScope) error {
	found := configerr.List(c.validate())
	if scope != checkSettings {
		found = append(found, c.checkLocal(getenv)...)
	}
	if scope == checkMachine {
		found = append(found, c.checkPinsLock()...)
	}
	errs := slices.Clone(c.src.problems) // reading the file, the environment, the flags
	for _, err := range found {
		if !c.src.consequence(err) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 && c.src.nothingGiven {
		errs = append(errs, errNothingGiven)
	}
	if len(errs) > 0 {
		return redacted(fmt.Errorf("invalid configuration:\n%w", c.src.locate(errors.Join(errs...))))
	}
	return nil
}

// checkLocal reads every secret, TLS file and lock file the configuration names, as building the
// gateway will, and reports each one that cannot be used.
func (c *Config) checkLocal(getenv func(string) string) []error {
	var errs []error
	values := make(map[string]string)
	for _, r := range c.secretRefs() {
		if r.s.validate() != nil {
			continue // validate reports a secret without exactly one source
		}
		v, err := r.s.resolve(getenv)
		if err != nil {
			errs = append(errs, configerr.At(r.path, "%w", err))
			continue
		}
		values[r.path] = v
	}
	errs = append(errs, c.checkKeyLengths(values)...)
	if v, ok := values["admin.token"]; ok && len(v) < minAdminTokenLength {
		errs = append(errs, configerr.At("admin.token", "shorter than %d characters", minAdminTokenLength))
	}
	errs = append(errs, c.checkHeaderValues(values)...)
	return append(errs, c.checkTLSFiles()...)
}

// checkTLSFiles loads every certificate, key and CA bundle the configuration names, as building
// the gateway will.
func (c *Config) checkTLSFiles() []error {
	var errs []error
	if t := c.Server.TLS; t.CertFile != "" && t.KeyFile != "" {
		_, err := certreload.New(t.CertFile, t.KeyFile)
		errs = append(errs, fileErrors("server.tls", tlsFiles("server.tls", "", t.CertFile, t.KeyFile), err)...)
	}
	for i, u := range c.Upstreams {
		at := fmt.Sprintf("upstreams[%d].tls", i)
		errs = append(errs, fileErrors(at, tlsFiles(at, u.TLS.CAFile, u.TLS.CertFile, u.TLS.KeyFile), u.TLS.CheckFiles(u.URL))...)
	}
	if c.Redis.enabled() {
		t := c.Redis.TLS
		errs = append(errs, fileErrors("redis.tls", tlsFiles("redis.tls", t.CAFile, t.CertFile, t.KeyFile), c.Redis.RedisConfig.CheckFiles())...)
	}
	return append(errs, c.checkInterceptorTLS()...)
}

// checkHeaderValues refuses a header value read from a secret that a request could not carry
// (a line break inside it); the value is never printed.
func (c *Config) checkHeaderValues(values map[string]string) []error {
	var errs []error
	for _, r := range c.secretRefs() {
		if !strings.Contains(r.path, ".headers.") {
			continue
		}
		if v, ok := values[r.path]; ok && strings.ContainsAny(v, "\r\n\x00") {
			errs = append(errs, configerr.At(r.path, "the secret's value has a control character (CR, LF or NUL) inside it"))
		}
	}
	return errs
}

// checkKeyLengths refuses a sealing key shorter than the key ring accepts; the key's text is
// never printed, nor its length.
func (c *Config) checkKeyLengths(values map[string]string) []error {
	var errs []error
	paths := c.userOAuthKeyPaths()
	for i := range c.MRTR.Keys {
		paths = append(paths, fmt.Sprintf("mrtr.keys[%d].secret", i))
	}
	for _, path := range paths {
		if v, ok := values[path]; ok && len(v) < seal.MinSecretBytes {
			errs = append(errs, configerr.At(path, "too short: a key needs at least %d bytes of random text (head -c 32 /dev/urandom | base64)",
				seal.MinSecretBytes))
		}
	}
	return errs
}

// checkPinsLock loads the lock file when a backend is pinned from it, or pinned on first use
// (whose first contact takes the lock file's section when it has one), and checks that it has
// a section for every backend pinned from it, as the pin guard requires at start-up.
func (c *Config) checkPinsLock() []error {
	if c.Pins == nil || c.Pins.LockFile == "" {
		return nil
	}
	// The backends pinned from the lock file; what the others need is checked by validate.
	names := slices.DeleteFunc(c.upstreamNames(), func(n string) bool { return c.Pins.ModeFor(n) != pins.ModeLockfile })
	if !c.Pins.LoadsLock(c.upstreamNames()) {
		return nil
	}
	lock, err := pins.LoadLock(c.Pins.LockFile)
	if err != nil {
		return fileErrors("pins.lockFile", []keyFile{{"pins.lockFile", c.Pins.LockFile}}, err)
	}
	if _, err := pins.NewGuard(pins.GuardOptions{Config: c.Pins, Lock: lock, Backends: names}); err != nil {
		return []error{configerr.At("pins.lockFile", "%w", err)}
	}
	return nil
}

// secretRef is one configured secret and the key path it is configured at.
type secretRef struct {
	path string
	s    Secret
}

// secretRefs lists every secret the configuration uses, in file order: those that must be set
// and those set although optional.
func (c *Config) secretRefs() []secretRef {
	var out []secretRef
	add := func(path string, s Secret, optional bool) {
		if !optional || !s.IsZero() {
			out = append(out, secretRef{path, s})
		}
	}
	add("admin.token", c.Admin.Token, true)
	add("admin.explain.secret", c.Admin.Explain.Secret, true)
	for i, k := range c.MRTR.Keys {
		add(fmt.Sprintf("mrtr.keys[%d].secret", i), k.Secret, false)
	}
	if c.Redis.enabled() {
		add("redis.password", c.Redis.Password, true)
		add("redis.sentinelPassword", c.Redis.SentinelPassword, true)
	}
	for i, u := range c.Upstreams {
		for _, h := range sortedKeys(u.Headers) {
			add(fmt.Sprintf("upstreams[%d].headers.%s", i, h), u.Headers[h], false)
		}
		add(fmt.Sprintf("upstreams[%d].auth.clientSecret", i), u.Auth.ClientSecret, true)
	}
	for _, h := range sortedKeys(c.Tracing.Headers) {
		add("tracing.headers."+h, c.Tracing.Headers[h], false)
	}
	if c.Approval.Enabled() {
		add("approval.clientSecret", c.Approval.ClientSecret, true)
	}
	for i, p := range c.userOAuthKeyPaths() {
		add(p, c.UserOAuth.Keys[i].Secret, false)
	}
	c.interceptorSecretRefs(add)
	if c.Search.Embeddings.Enabled() {
		add("search.embeddings.apiKey", c.Search.Embeddings.APIKey, true)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
