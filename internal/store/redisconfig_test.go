package store

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-gateway/gateway/internal/certreload"
)

func TestRedisConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     RedisConfig
		wantErr []string
	}{
		{name: "disabled", cfg: RedisConfig{}},
		{name: "url", cfg: RedisConfig{URL: "redis://127.0.0.1:6379/2"}},
		{name: "tls url", cfg: RedisConfig{URL: "rediss://redis.internal:6380", TLS: RedisTLS{CAFile: "ca.pem"}}},
		{name: "sentinel", cfg: RedisConfig{Addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}, MasterName: "mymaster"}},
		{name: "cluster", cfg: RedisConfig{Addrs: []string{"10.0.0.1:6379"}, Cluster: true}},
		{name: "url and addrs", cfg: RedisConfig{URL: "redis://a:1", Addrs: []string{"b:2"}}, wantErr: []string{"url: url and addrs exclude each other"}},
		{name: "bad scheme", cfg: RedisConfig{URL: "http://a:1"}, wantErr: []string{"scheme"}},
		{name: "no host", cfg: RedisConfig{URL: "redis://"}, wantErr: []string{"no host"}},
		{name: "db not a number", cfg: RedisConfig{URL: "redis://:Pa55wordOfTheRedis99@a:1/x"}, wantErr: []string{"url: is not a Redis URL"}},
		{name: "bad addr", cfg: RedisConfig{Addrs: []string{"nohost", ":6379", "h:0"}}, wantErr: []string{"addrs[0]", "addrs[1]", "addrs[2]"}},
		{name: "masterName alone", cfg: RedisConfig{MasterName: "m"}, wantErr: []string{"need url or addrs"}},
		{name: "sentinel and cluster", cfg: RedisConfig{Addrs: []string{"a:1"}, MasterName: "m", Cluster: true}, wantErr: []string{"Sentinel"}},
		{name: "sentinel with url", cfg: RedisConfig{URL: "redis://a:1", MasterName: "m"}, wantErr: []string{"masterName: needs Sentinel addrs"}},
		{name: "db under cluster", cfg: RedisConfig{Addrs: []string{"a:1", "b:2"}, DB: 3}, wantErr: []string{"db: 3: want"}},
		{name: "negative tuning", cfg: RedisConfig{URL: "redis://a:1", DB: -1, PoolSize: -1, DialTimeout: -1, ReadTimeout: -1, WriteTimeout: -1, MaxRetries: -2},
			wantErr: []string{"db: -1: want", "poolSize", "dialTimeout", "readTimeout", "writeTimeout", "maxRetries"}},
		{name: "prefix", cfg: RedisConfig{URL: "redis://a:1", KeyPrefix: "my app:"}, wantErr: []string{"keyPrefix"}},
		{name: "long prefix", cfg: RedisConfig{URL: "redis://a:1", KeyPrefix: strings.Repeat("p", MaxKeyPrefixLen+1)}, wantErr: []string{"keyPrefix: longer"}},
		{name: "tls options without tls", cfg: RedisConfig{URL: "redis://a:1", TLS: RedisTLS{CAFile: "ca.pem"}}, wantErr: []string{"TLS is off"}},
		{name: "cert without key", cfg: RedisConfig{Addrs: []string{"a:1"}, TLS: RedisTLS{Enabled: true, CertFile: "c.pem"}}, wantErr: []string{"go together"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors mentioning %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "Pa55word") {
				t.Errorf("Validate() = %v quotes the password", err)
			}
		})
	}
}

func TestRedisConfigOptions(t *testing.T) {
	tests := []struct {
		name      string
		cfg       RedisConfig
		wantAddrs []string
		wantUser  string
		wantPass  string
		wantDB    int
		wantTLS   bool
	}{
		{name: "url", cfg: RedisConfig{URL: "redis://u:p@127.0.0.1:6379/2"},
			wantAddrs: []string{"127.0.0.1:6379"}, wantUser: "u", wantPass: "p", wantDB: 2},
		{name: "fields override url", cfg: RedisConfig{URL: "redis://u:p@127.0.0.1:6379/2", Username: "v", Password: "q", DB: 5},
			wantAddrs: []string{"127.0.0.1:6379"}, wantUser: "v", wantPass: "q", wantDB: 5},
		{name: "rediss", cfg: RedisConfig{URL: "rediss://127.0.0.1:6380"},
			wantAddrs: []string{"127.0.0.1:6380"}, wantTLS: true},
		{name: "cluster url seeds", cfg: RedisConfig{URL: "redis://127.0.0.1:7000?addr=127.0.0.1:7001", Cluster: true},
			wantAddrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}},
		{name: "addrs with tls", cfg: RedisConfig{Addrs: []string{"127.0.0.1:1"}, Password: "q", TLS: RedisTLS{Enabled: true}},
			wantAddrs: []string{"127.0.0.1:1"}, wantPass: "q", wantTLS: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := tt.cfg.universalOptions()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(o.Addrs, ",") != strings.Join(tt.wantAddrs, ",") || o.Username != tt.wantUser ||
				o.Password != tt.wantPass || o.DB != tt.wantDB || (o.TLSConfig != nil) != tt.wantTLS {
				t.Fatalf("got addrs=%v user=%q db=%d tls=%v, want addrs=%v user=%q db=%d tls=%v",
					o.Addrs, o.Username, o.DB, o.TLSConfig != nil, tt.wantAddrs, tt.wantUser, tt.wantDB, tt.wantTLS)
			}
			if o.TLSConfig != nil && o.TLSConfig.InsecureSkipVerify {
				t.Fatal("TLS verification off by default")
			}
			if o.DialTimeout != DefaultDialTimeout || o.ReadTimeout != DefaultReadTimeout ||
				o.WriteTimeout != DefaultWriteTimeout || o.MaxRetries != DefaultMaxRetries {
				t.Fatalf("defaults not applied: %v %v %v %d", o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.MaxRetries)
			}
		})
	}
}

func TestRedisConfigTLSFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A path naming something far larger than a PEM file (a device, a log) is refused for its
	// size after reading at most certreload.MaxFileBytes, not read whole.
	huge := filepath.Join(dir, "huge.pem")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(certreload.MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name string
		tls  RedisTLS
		want string
	}{
		{name: "huge ca file", tls: RedisTLS{Enabled: true, CAFile: huge}, want: "huge.pem is over"},
		{name: "huge client certificate", tls: RedisTLS{Enabled: true, CertFile: huge, KeyFile: garbage}, want: "huge.pem is over"},
		{name: "huge client key", tls: RedisTLS{Enabled: true, CertFile: garbage, KeyFile: huge}, want: "huge.pem is over"},
		{name: "missing ca file", tls: RedisTLS{Enabled: true, CAFile: filepath.Join(dir, "absent.pem")}, want: "caFile"},
		{name: "ca file without pem", tls: RedisTLS{Enabled: true, CAFile: garbage}, want: "no PEM"},
		{name: "bad client pair", tls: RedisTLS{Enabled: true, CertFile: garbage, KeyFile: garbage}, want: "client certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRedis(RedisConfig{Addrs: []string{"127.0.0.1:1"}, TLS: tt.tls})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewRedis err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestNewRedisRejects(t *testing.T) {
	if _, err := NewRedis(RedisConfig{}); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("NewRedis(empty) err = %v, want ErrNotConfigured", err)
	}
	if _, err := NewRedis(RedisConfig{URL: "ftp://x:1"}); err == nil {
		t.Error("NewRedis(invalid) err = nil")
	}
}

func TestRedisConfigYAML(t *testing.T) {
	const doc = `
url: redis://127.0.0.1:6379/0
username: gw
tls: { enabled: true, caFile: /etc/redis/ca.pem }
poolSize: 20
dialTimeout: 3s
readTimeout: 250ms
keyPrefix: "gw1:"
`
	var cfg RedisConfig
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.DialTimeout != 3*time.Second || cfg.ReadTimeout != 250*time.Millisecond || cfg.PoolSize != 20 ||
		!cfg.TLS.Enabled || cfg.TLS.CAFile != "/etc/redis/ca.pem" || cfg.KeyPrefix != "gw1:" || cfg.Username != "gw" {
		t.Fatalf("decoded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// Secrets never come from the YAML file: the caller resolves them.
	for _, key := range []string{"password", "sentinelPassword"} {
		dec := yaml.NewDecoder(strings.NewReader(key + ": hunter2\n"))
		dec.KnownFields(true)
		var c RedisConfig
		if err := dec.Decode(&c); err == nil || c.Password != "" || c.SentinelPassword != "" {
			t.Errorf("YAML %s: err = %v, want the key rejected", key, err)
		}
	}
}

// TestRedisConfigLogValueHidesSecrets: the configuration's log value shows none of its
// passwords, wherever the URL carries one (the user information, parsed or not, the query) and
// whoever (the user name, which an ACL user's password can be mistaken for), and still shows
// the address.
func TestRedisConfigLogValueHidesSecrets(t *testing.T) {
	for _, url := range []string{
		"redis://gwsecret:urlsecret@127.0.0.1:6379/0?client_name=querysecret",
		"redis://gwsecret:url/secret@127.0.0.1:6379/0", // a password written unencoded: the URL does not parse
	} {
		cfg := RedisConfig{URL: url, Password: "fieldsecret", SentinelPassword: "sentinelsecret"}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("redis", "config", cfg)
		for _, secret := range []string{"gwsecret", "urlsecret", "querysecret", "fieldsecret", "sentinelsecret"} {
			if strings.Contains(buf.String(), secret) {
				t.Errorf("log line %s contains %q", buf.String(), secret)
			}
		}
		if !strings.Contains(buf.String(), "127.0.0.1:6379") {
			t.Errorf("log line %s lacks the address", buf.String())
		}
	}
}
