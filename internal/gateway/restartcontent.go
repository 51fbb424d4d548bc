package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-gateway/gateway/internal/certreload"
)

// What the settings only a restart changes read from files and the environment. A reload
// compares those settings as written (keepRestartOnly), so a file rewritten under the same name
// (a rotated Redis password or client certificate, an MRTR key file replaced, a tracing
// collector's key renewed) changes nothing it compares, while the process goes on with what it
// read at start-up: the reload names such a setting among those waiting for a restart, rather
// than report the new content applied.

// contentDigests are, by key path, digests of what each restart-only setting that names a file
// or a variable read; a problem reading it is digested as its text.
type contentDigests map[string][sha256.Size]byte

// contentKey is the key the digests are made with: a random one for each process, so that no
// digest of a password or key kept in memory can be checked against guesses.
func contentKey() []byte {
	return []byte(rand.Text())
}

// restartOnlyContent digests, with key, what cfg's restart-only settings read: the Redis
// passwords and TLS files, the MRTR keys and the tracing headers. The listener's certificate
// is not among them: it is followed as its files change (certreload).
func restartOnlyContent(cfg *Config, getenv func(string) string, key []byte) contentDigests {
	out := contentDigests{}
	digest := func(path string, content []byte, err error) {
		mac := hmac.New(sha256.New, key)
		if err != nil {
			mac.Write([]byte("error: " + err.Error()))
		} else {
			mac.Write([]byte("content: "))
			mac.Write(content)
		}
		out[path] = [sha256.Size]byte(mac.Sum(nil))
	}
	secret := func(path string, s Secret) {
		if s.IsZero() {
			return
		}
		v, err := s.resolve(getenv)
		digest(path, []byte(v), err)
	}
	file := func(path, name string) {
		if name == "" {
			return
		}
		b, err := certreload.ReadFile(name)
		digest(path, b, err)
	}
	if cfg.Redis.enabled() {
		secret("redis.password", cfg.Redis.Password)
		secret("redis.sentinelPassword", cfg.Redis.SentinelPassword)
		file("redis.tls.caFile", cfg.Redis.TLS.CAFile)
		file("redis.tls.certFile", cfg.Redis.TLS.CertFile)
		file("redis.tls.keyFile", cfg.Redis.TLS.KeyFile)
	}
	for i, k := range cfg.MRTR.Keys {
		secret(fmt.Sprintf("mrtr.keys[%d].secret", i), k.Secret)
	}
	if cfg.Tracing.Endpoint != "" {
		for h, s := range cfg.Tracing.Headers {
			secret("tracing.headers."+h, s)
		}
	}
	return out
}

// contentChanged names the settings of now whose content differs from was, each as waiting
// for a restart, leaving out those under a block already named in restart (its setting
// changed, and the block waits for a restart as a whole).
func contentChanged(was, now contentDigests, restart []string) []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(now)) {
		if d, ok := was[path]; ok && d == now[path] {
			continue
		}
		block, _, _ := strings.Cut(path, ".")
		if slices.Contains(restart, block) {
			continue
		}
		out = append(out, path+" (what it reads changed since the start)")
	}
	return out
}
