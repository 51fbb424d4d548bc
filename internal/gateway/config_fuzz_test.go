package gateway

import (
	"bytes"
	"net/url"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// configSeeds are configurations a real operator could write, and a few a hostile or careless
// one could; testdata/fuzz/FuzzConfig holds more.
func configSeeds() []string {
	return []string{
		"",
		"server: {listen: \"127.0.0.1:8080\"}\nauth: {disabled: true}\nupstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n",
		`server:
  listen: ":8080"
  publicURL: https://mcp.example.com/mcp
  maxBodyBytes: 4194304
  allowedOrigins: ["https://app.example.com"]
  drainDelay: 10s
auth:
  issuers: [{issuer: "https://idp.example.com/"}]
  policy:
    rules:
      - {id: r, upstream: github, tools: ["get_*"], anyScope: ["github:read"], confirm: true, rateLimit: 60/m}
mrtr: {keys: [{id: k1, secret: {env: MRTR_KEY}}], ttl: 10m}
redis: {url: "redis://127.0.0.1:6379/0", password: {file: /run/secrets/redis}}
upstreams:
  - {name: github, url: "https://github-mcp.internal/mcp", timeout: 30s, headers: {Authorization: {file: /secrets/gh}}}
`,
		"a: &a [*a]\n",
		"server: {listen: 1}\n---\nserver: {listen: 2}\n",
		"upstreams: [{name: A_B, url: \"ftp://x\", timeout: -1s, headers: {\"X\\r\\nY\": {value: v, env: E}}}]\n",
		"mrtr: {keys: [{id: \"\", secret: {value: Sh0rtButSECRET1234567890abcdef}}], ttl: 1ns}\n",
		"redis: {url: \"redis://:Pa55wordOfTheRedis99@127.0.0.1:6379\"}\n",
		"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\", headers: {Authorization: Bearer0Secret0Token0Value9}}]\n",
		"mrtr: {keys: [{id: k, secret: Sh0rtButSECRET1234567890abcdef}]}\n",
		"server: {maxBodyBytes: 99999999999999999999}\n",
	}
}

// FuzzConfig: loading never panics, whatever the file holds; an error reading the file never
// repeats a value of it, and a validation error never repeats a secret value given inline.
func FuzzConfig(f *testing.F) {
	for _, s := range configSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Config
		if err := decodeYAML(bytes.NewReader(data), &c); err != nil {
			for _, v := range scalarValues(data) {
				if secretLike(v) && bytes.Count(data, []byte(v)) == 1 && strings.Contains(err.Error(), v) {
					t.Fatalf("the error reading the file repeats the value %q: %v", v, err)
				}
			}
			return
		}
		c.applyDefaults()
		err := c.validate()
		if err == nil {
			return
		}
		msg := err.Error()
		for _, s := range inlineSecrets(&c) {
			if secretLike(s) && bytes.Count(data, []byte(s)) == 1 && strings.Contains(msg, s) {
				t.Fatalf("validation error repeats the secret %q: %s", s, msg)
			}
		}
	})
}

// scalarValues lists the values (not the keys) of the YAML in data.
func scalarValues(data []byte) []string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return nil
	}
	var out []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for i, child := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue // a key
			}
			if child.Kind == yaml.ScalarNode {
				out = append(out, child.Value)
			}
			walk(child)
		}
	}
	walk(&root)
	return out
}

func inlineSecrets(c *Config) []string {
	out := []string{c.Redis.Password.Value, c.Redis.SentinelPassword.Value, c.Redis.RedisConfig.Password}
	for _, k := range c.MRTR.Keys {
		out = append(out, k.Secret.Value)
	}
	for _, u := range c.Upstreams {
		for _, s := range u.Headers {
			out = append(out, s.Value)
		}
	}
	if u, err := url.Parse(c.Redis.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}

// secretLike keeps the check to values that cannot be mistaken for words of an error message:
// at least 16 letters and digits with an upper-case letter and a digit.
func secretLike(s string) bool {
	if len(s) < 16 {
		return false
	}
	var upper, digit bool
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z':
		default:
			return false
		}
	}
	return upper && digit
}
