package store

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/mcp-gateway/gateway/internal/certreload"
	"github.com/mcp-gateway/gateway/internal/configerr"
)

// Defaults for RedisConfig.
const (
	// DefaultKeyPrefix starts every key the gateway writes, so it can share a
	// Redis with other applications.
	DefaultKeyPrefix = "mcpgw:"
	// DefaultDialTimeout bounds opening one connection.
	DefaultDialTimeout = 2 * time.Second
	// DefaultReadTimeout bounds waiting for one reply.
	DefaultReadTimeout = time.Second
	// DefaultWriteTimeout bounds sending one command.
	DefaultWriteTimeout = time.Second
	// DefaultMaxRetries is how often a command is retried after a network
	// error or a reply that timed out. Redis may run both copies; every write
	// that must act once tells its own earlier copy from another writer's (a
	// single use's token, a rate-limit charge's marker: see Redis.token and
	// ratecharge.go).
	DefaultMaxRetries = 1
	// DefaultWaitTimeout bounds how long a single-use write waits for replicas' acknowledgement
	// when RedisConfig.WaitReplicas is set.
	DefaultWaitTimeout = 250 * time.Millisecond
	// MaxWaitReplicas bounds RedisConfig.WaitReplicas.
	MaxWaitReplicas = 16
	// MaxKeyPrefixLen bounds RedisConfig.KeyPrefix.
	MaxKeyPrefixLen = 64
)

// RedisConfig selects and tunes the Redis store. Exactly one of URL or Addrs
// selects the server; with neither the gateway uses the memory store (see
// Enabled). Secrets are values here: the caller resolves them from files or
// environment variables before building the config.
//
// An operation against an unreachable Redis returns ErrUnavailable after at
// most (MaxRetries+1) × (DialTimeout + WriteTimeout + ReadTimeout) plus
// go-redis's short retry backoff, or sooner when the caller's context ends.
type RedisConfig struct {
	// URL of a single Redis ("redis://[user:pass@]host:port/db", or
	// "rediss://" for TLS). With Cluster it is a seed node and more seeds can
	// be given as "?addr=host:port" parameters.
	URL string `yaml:"url"`
	// Addrs are host:port seeds: Sentinel addresses when MasterName is set,
	// cluster nodes when Cluster is set or more than one is given, otherwise
	// the single server.
	Addrs []string `yaml:"addrs"`
	// MasterName is the Sentinel master set name; it switches Addrs to
	// Sentinel discovery.
	MasterName string `yaml:"masterName"`
	// Cluster selects Redis Cluster even with a single seed address.
	Cluster bool `yaml:"cluster"`
	// Username for Redis ACL authentication; overrides one in URL.
	Username string `yaml:"username"`
	// Password for Redis authentication; overrides one in URL. Never logged. Not read from
	// YAML: the caller resolves it from a secret file or variable.
	Password string `yaml:"-"`
	// SentinelUsername authenticates to the Sentinels themselves.
	SentinelUsername string `yaml:"sentinelUsername"`
	// SentinelPassword authenticates to the Sentinels themselves. Never logged. Not read
	// from YAML: the caller resolves it from a secret file or variable.
	SentinelPassword string `yaml:"-"`
	// DB is the database number; non-zero overrides the one in URL. Must be 0
	// with Cluster.
	DB int `yaml:"db"`
	// TLS configures encrypted connections; "rediss://" turns it on too.
	TLS RedisTLS `yaml:"tls"`
	// PoolSize is the connection pool size per node; 0 uses go-redis's
	// default of 10 per GOMAXPROCS.
	PoolSize int `yaml:"poolSize"`
	// DialTimeout bounds opening a connection; 0 means DefaultDialTimeout.
	DialTimeout time.Duration `yaml:"dialTimeout"`
	// ReadTimeout bounds waiting for a reply; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration `yaml:"readTimeout"`
	// WriteTimeout bounds sending a command; 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration `yaml:"writeTimeout"`
	// MaxRetries is how often a command is retried after a network error; 0
	// means DefaultMaxRetries and -1 disables retries.
	MaxRetries int `yaml:"maxRetries"`
	// KeyPrefix starts every key; "" means DefaultKeyPrefix. Avoid "{" and
	// "}" under Cluster: a hash tag would put every key in one slot.
	KeyPrefix string `yaml:"keyPrefix"`
	// WaitReplicas, when positive, makes each single-use (confirmation) write wait until that
	// many replicas acknowledge it (Redis WAIT) before the gateway acts on the confirmation.
	// Without it a failover to an asynchronous replica that missed the write could accept a
	// consumed confirmation again; with it, the consumption survives the promotion of any
	// replica that acknowledged. When fewer replicas acknowledge within WaitTimeout the use is
	// refused (fail closed, retryable). 0 (the default) does not wait. Rate limits and the
	// list cache never wait.
	WaitReplicas int `yaml:"waitReplicas"`
	// WaitTimeout bounds that wait; 0 means DefaultWaitTimeout. It must be shorter than
	// ReadTimeout, which bounds the whole exchange.
	WaitTimeout time.Duration `yaml:"waitTimeout"`
	// Breaker skips Redis for a short cooldown after consecutive failures, so that a hanging
	// Redis costs requests no timeouts (see RedisBreaker for the defaults).
	Breaker RedisBreaker `yaml:"breaker"`
}

// RedisTLS configures TLS toward Redis. Verification is on unless
// InsecureSkipVerify is set.
type RedisTLS struct {
	// Enabled turns TLS on for Addrs (a "rediss://" URL turns it on anyway).
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM bundle of CAs to trust instead of the system pool.
	CAFile string `yaml:"caFile"`
	// CertFile is a PEM client certificate for mutual TLS; needs KeyFile.
	CertFile string `yaml:"certFile"`
	// KeyFile is the PEM private key for CertFile.
	KeyFile string `yaml:"keyFile"`
	// ServerName overrides the name verified in the server certificate;
	// empty means the host being dialled.
	ServerName string `yaml:"serverName"`
	// InsecureSkipVerify disables certificate verification. Tests only.
	InsecureSkipVerify bool `yaml:"insecureSkipVerify"`
}

// Enabled reports whether c selects a Redis server at all.
func (c RedisConfig) Enabled() bool { return c.URL != "" || len(c.Addrs) > 0 }

// Validate reports every problem with c, each a *configerr.Error whose key path is relative to
// the redis block (url, addrs[1], breaker.cooldown). It reads no files and dials nothing.
func (c RedisConfig) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if c.URL != "" && len(c.Addrs) > 0 {
		add("url", "url and addrs exclude each other: url for one server, addrs for Sentinel or Cluster")
	}
	if !c.Enabled() && (c.MasterName != "" || c.Cluster) {
		add("", "masterName and cluster need url or addrs")
	}
	if c.URL != "" {
		if err := c.validateURL(); err != nil {
			add("url", "%v", err)
		}
	}
	for i, a := range c.Addrs {
		if err := validateAddr(a); err != nil {
			add(fmt.Sprintf("addrs[%d]", i), "%v", err)
		}
	}
	if c.MasterName != "" && c.Cluster {
		add("masterName", "masterName (Sentinel) and cluster exclude each other")
	}
	if c.MasterName != "" && c.URL != "" {
		add("masterName", "needs Sentinel addrs, not url")
	}
	if c.DB < 0 || (c.DB != 0 && c.clusterMode()) {
		add("db", "%d: want 0 or more, and 0 under Cluster", c.DB)
	}
	errs = append(errs, c.validateTuning()...)
	errs = append(errs, configerr.Under("breaker", nil, c.Breaker.validate()...)...)
	errs = append(errs, configerr.Under("tls", nil, c.TLS.validate(c.tlsOn())...)...)
	return errors.Join(errs...)
}

// validateURL checks the URL as go-redis will parse it, without quoting it: it may hold a
// password.
func (c RedisConfig) validateURL() error {
	u, err := url.Parse(c.URL)
	if err != nil {
		return errors.New("does not parse as a URL")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return fmt.Errorf("scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("has no host")
	}
	var perr error
	if c.Cluster {
		_, perr = redis.ParseClusterURL(c.URL)
	} else {
		_, perr = redis.ParseURL(c.URL)
	}
	if perr != nil {
		return errors.New("is not a Redis URL: want redis[s]://[user:password@]host:port[/db] with a numeric db")
	}
	return nil
}

func validateAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("%q: want host:port", a)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", a)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q has no valid port", a)
	}
	return nil
}

func (c RedisConfig) validateTuning() []error {
	var errs []error
	add := func(path, format string, args ...any) { errs = append(errs, configerr.At(path, format, args...)) }
	if c.PoolSize < 0 {
		add("poolSize", "must not be negative")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dialTimeout", c.DialTimeout}, {"readTimeout", c.ReadTimeout}, {"writeTimeout", c.WriteTimeout}} {
		if d.v < 0 {
			add(d.name, "must not be negative")
		}
	}
	if c.WaitReplicas < 0 || c.WaitReplicas > MaxWaitReplicas {
		add("waitReplicas", "%d: want 0..%d", c.WaitReplicas, MaxWaitReplicas)
	}
	if c.WaitTimeout < 0 {
		add("waitTimeout", "must not be negative")
	} else if c.WaitReplicas > 0 && orDefault(c.WaitTimeout, DefaultWaitTimeout) >= orDefault(c.ReadTimeout, DefaultReadTimeout) {
		add("waitTimeout", "%v must be shorter than readTimeout %v",
			orDefault(c.WaitTimeout, DefaultWaitTimeout), orDefault(c.ReadTimeout, DefaultReadTimeout))
	}
	if c.MaxRetries < -1 {
		add("maxRetries", "%d: want -1 (no retries), 0 (the default, %d) or more", c.MaxRetries, DefaultMaxRetries)
	}
	if len(c.KeyPrefix) > MaxKeyPrefixLen {
		add("keyPrefix", "longer than %d bytes", MaxKeyPrefixLen)
	}
	if strings.ContainsFunc(c.KeyPrefix, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
		add("keyPrefix", "contains spaces or control characters")
	}
	return errs
}

func (t RedisTLS) validate(on bool) []error {
	var errs []error
	if !on && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify) {
		errs = append(errs, configerr.At("", "options set but TLS is off: set tls.enabled or use a rediss:// url"))
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, configerr.At("certFile", "certFile and keyFile go together: set both or neither"))
	}
	return errs
}

func (c RedisConfig) clusterMode() bool {
	return c.Cluster || (c.MasterName == "" && len(c.Addrs) > 1)
}

func (c RedisConfig) tlsOn() bool {
	return c.TLS.Enabled || strings.HasPrefix(c.URL, "rediss://")
}

// KeyPrefixOrDefault is the prefix of every key the gateway reads and writes: KeyPrefix, or
// DefaultKeyPrefix when it is empty.
func (c RedisConfig) KeyPrefixOrDefault() string {
	if c.KeyPrefix == "" {
		return DefaultKeyPrefix
	}
	return c.KeyPrefix
}

// LogValue implements slog.LogValuer, leaving out the passwords and any
// credentials in the URL.
func (c RedisConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", configerr.URL(c.URL)),
		slog.Any("addrs", c.Addrs),
		slog.String("masterName", c.MasterName),
		slog.Bool("cluster", c.Cluster),
		slog.Int("db", c.DB),
		slog.Bool("tls", c.tlsOn()),
		slog.String("keyPrefix", c.KeyPrefixOrDefault()),
	)
}

// universalOptions compiles c into go-redis options, loading TLS files.
func (c RedisConfig) universalOptions() (*redis.UniversalOptions, error) {
	o := &redis.UniversalOptions{
		Addrs:            c.Addrs,
		MasterName:       c.MasterName,
		IsClusterMode:    c.Cluster,
		SentinelUsername: c.SentinelUsername,
		SentinelPassword: c.SentinelPassword,
		PoolSize:         c.PoolSize,
		DialTimeout:      orDefault(c.DialTimeout, DefaultDialTimeout),
		ReadTimeout:      orDefault(c.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:     orDefault(c.WriteTimeout, DefaultWriteTimeout),
		MaxRetries:       orDefault(c.MaxRetries, DefaultMaxRetries),
		// One dial per command attempt: go-redis's own five dial attempts
		// would multiply DialTimeout and hide an outage behind seconds of
		// waiting; MaxRetries already retries the command.
		DialerRetries: 1,
		// A caller's context deadline shorter than the timeouts must win.
		ContextTimeoutEnabled: true,
		DisableIdentity:       true,
		MaintNotificationsConfig: &maintnotifications.Config{
			Mode: maintnotifications.ModeDisabled,
		},
	}
	if c.URL != "" {
		if err := c.applyURL(o); err != nil {
			return nil, err
		}
	}
	c.applyOverrides(o)
	if c.tlsOn() {
		cfg, err := c.TLS.load()
		if err != nil {
			return nil, err
		}
		o.TLSConfig = cfg
	}
	return o, nil
}

// applyOverrides lets explicit credential and db fields win over the URL's.
func (c RedisConfig) applyOverrides(o *redis.UniversalOptions) {
	if c.Username != "" {
		o.Username = c.Username
	}
	if c.Password != "" {
		o.Password = c.Password
	}
	if c.DB != 0 {
		o.DB = c.DB
	}
}

// applyURL takes address, credentials and db from c.URL. go-redis also reads
// tuning query parameters; the explicit config fields take precedence.
func (c RedisConfig) applyURL(o *redis.UniversalOptions) error {
	if c.Cluster {
		co, err := redis.ParseClusterURL(c.URL)
		if err != nil {
			return errors.New("store: redis url: invalid cluster url")
		}
		o.Addrs, o.Username, o.Password = co.Addrs, co.Username, co.Password
		return nil
	}
	so, err := redis.ParseURL(c.URL)
	if err != nil {
		// go-redis errors can quote the URL, password included.
		return errors.New("store: redis url: invalid url")
	}
	o.Addrs, o.Username, o.Password, o.DB = []string{so.Addr}, so.Username, so.Password, so.DB
	return nil
}

func (t RedisTLS) load() (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify, //nolint:gosec // opt-in, documented as tests only
	}
	if t.CAFile != "" {
		pem, err := certreload.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("store: redis tls caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("store: redis tls caFile holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := loadKeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("store: redis tls client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// loadKeyPair is tls.LoadX509KeyPair reading each file through certreload's bound.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := certreload.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := certreload.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// CheckFiles reads the TLS files c names (CA bundle, client certificate and key) as NewRedis
// will, so that a configuration check reports a file that is missing or unreadable without
// building the client. It dials nothing.
func (c RedisConfig) CheckFiles() error {
	if !c.tlsOn() {
		return nil
	}
	_, err := c.TLS.load()
	return err
}
