package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
	"github.com/mcp-gateway/gateway/internal/testsupport/testredis"
)

// TestCheckConfigOnline: check-config --online fetches each issuer's discovery document and key
// set and probes each backend, one line per item, against a real issuer and real SDK servers of
// both eras: a misspelt issuer (discovery answers 404) and a backend that is not there fail,
// named, and make the check fail; the same file without them passes.
func TestCheckConfigOnline(t *testing.T) {
	iss := newIssuer(t)
	modern := mcptest.StartServer(t, "modern", mcptest.WithoutDefaults(),
		mcptest.WithTool(readTool(nil), noopTool), mcptest.WithTool(deleteTool(true), noopTool))
	legacy := mcptest.StartLegacyServer(t, "legacy", mcptest.WithoutDefaults(), mcptest.WithTool(deleteTool(true), noopTool))
	write := func(issuers []string, backends map[string]string) string {
		var b strings.Builder
		b.WriteString("server: {listen: \"127.0.0.1:0\", publicURL: \"" + testResource + "\"}\nauth:\n  issuers:\n")
		for _, u := range issuers {
			b.WriteString("    - issuer: " + u + "\n")
		}
		b.WriteString("  policy: {rules: [{id: all, issuers: [\"*\"]}]}\nupstreams:\n")
		for _, name := range []string{"modern", "legacy", "gone"} {
			if u, ok := backends[name]; ok {
				b.WriteString("  - {name: " + name + ", url: \"" + u + "\", timeout: 5s, connectTimeout: 1s}\n")
			}
		}
		path := filepath.Join(t.TempDir(), "gateway.yaml")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}

	bad := write([]string{iss.URL(), iss.URL() + "/typo"},
		map[string]string{"modern": modern.URL(), "legacy": legacy.URL(), "gone": "http://127.0.0.1:1/mcp"})
	out, _, err := runGateway(t, "check-config", "--config", bad, "--online")
	if err == nil || !strings.Contains(err.Error(), "2 of 5 item(s) failed") {
		t.Errorf("err = %v, want 2 of 5 failed", err)
	}
	for _, want := range []string{
		`(?m)^ok     auth\.issuers\[0\] ` + regexp.QuoteMeta(iss.URL()) + `: discovery, key set ` + regexp.QuoteMeta(iss.JWKSURL()) + `: [1-9][0-9]* usable key\(s\)$`,
		`(?m)^FAILED auth\.issuers\[1\] ` + regexp.QuoteMeta(iss.URL()+"/typo") + `: .*404`,
		`(?m)^ok     upstreams\[0\] modern: speaks 2026-07-28 \(server/discover\), 2 tool\(s\)$`,
		`(?m)^ok     upstreams\[1\] legacy: pre-2026 \(initialize, 2025-11-25\), 1 tool\(s\)$`,
		`(?m)^FAILED upstreams\[2\] gone: `,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}

	good := write([]string{iss.URL()}, map[string]string{"modern": modern.URL(), "legacy": legacy.URL()})
	if out, _, err := runGateway(t, "check-config", "--config", good, "--online"); err != nil {
		t.Errorf("a reachable configuration fails online: %v\n%s", err, out)
	}
	if _, _, err := runGateway(t, "check-config", "--config", good, "--online", "--static"); err == nil {
		t.Error("--online with --static accepted")
	}
}

// TestCheckConfigOnlineRedis: check-config --online also sends Redis a PING with the configured
// password, as serve will connect: a real redis-server that requires a password answers it, and
// one that cannot be reached fails the check, named without the password its URL carries.
func TestCheckConfigOnlineRedis(t *testing.T) {
	const password = "s3cr3t-redis-pw"
	rs := testredis.Start(t, testredis.WithPassword(password))
	for _, tc := range []struct{ url, want string }{
		{"redis://:" + password + "@" + rs.Addr() + "/0", `(?m)^ok     redis redis://REDACTED@` + regexp.QuoteMeta(rs.Addr()) + `/0: PING answered, keys under "mcpgw:" readable, writable and scriptable$`},
		{"redis://:" + password + "@" + closedPort(t) + "/0", `(?m)^FAILED redis redis://REDACTED@`},
	} {
		checkOnlineLines(t, "redis: {url: \""+tc.url+"\"}\n", strings.HasPrefix(tc.want, "(?m)^FAILED"), []string{tc.want}, password)
	}
}

// TestCheckConfigOnlineRedisKeyPrefix: PING alone does not show that serve may use its keys.
// check-config --online also reads a key under redis.keyPrefix, as a confirmation or a limit
// would: a real redis-server whose ACL user is granted only other keys answers PING and refuses
// the read, which fails the check naming redis.keyPrefix; the granted prefix passes, and a
// wrong password fails at AUTH. The password never shows.
func TestCheckConfigOnlineRedisKeyPrefix(t *testing.T) {
	const password = "acl-user-pw"
	rs := testredis.Start(t)
	if _, err := rs.Do("ACL", "SETUSER", "gw", "on", ">"+password, "~granted:*", "+@all"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ prefix, password, want string }{
		{"granted:", password, `(?m)^ok     redis redis://REDACTED@` + regexp.QuoteMeta(rs.Addr()) + `/0: PING answered, keys under "granted:" readable, writable and scriptable$`},
		{"other:", password, `(?m)^FAILED redis redis://REDACTED@` + regexp.QuoteMeta(rs.Addr()) + `/0: redis\.keyPrefix "other:": read: .*NOPERM`},
		{"granted:", "wrong-" + password, `(?m)^FAILED redis redis://REDACTED@.*WRONGPASS`},
	} {
		checkOnlineLines(t, "redis: {url: \"redis://gw:"+tc.password+"@"+rs.Addr()+"/0\", keyPrefix: \""+tc.prefix+"\"}\n",
			strings.Contains(tc.want, "FAILED"), []string{tc.want}, password)
	}
}

// TestCheckConfigOnlineRedisWritable: a Redis that answers PING and reads is not yet one serve
// can use: every confirmation, pin and limit writes, and every limit and hold runs a script.
// check-config --online also writes, deletes and runs the rate-limit script under
// redis.keyPrefix: a real read-only replica fails at the write (READONLY), an ACL user granted
// reads only fails at the write (NOPERM), one without scripting fails at the script, each
// named by the step; a primary passes, and the probe leaves no key behind.
func TestCheckConfigOnlineRedisWritable(t *testing.T) {
	const password = "acl-user-pw"
	primary := testredis.Start(t)
	replica := testredis.Start(t)
	host, port, _ := strings.Cut(primary.Addr(), ":")
	if _, err := replica.Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	for _, acl := range [][]string{
		{"ACL", "SETUSER", "reader", "on", ">" + password, "~*", "+@read", "+@connection"},
		{"ACL", "SETUSER", "noscript", "on", ">" + password, "~*", "+@all", "-@scripting"},
	} {
		if _, err := primary.Do(acl...); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ url, want string }{
		{"redis://" + primary.Addr() + "/0", `(?m)^ok     redis redis://` + regexp.QuoteMeta(primary.Addr()) + `/0: PING answered, keys under "mcpgw:" readable, writable and scriptable$`},
		{"redis://" + replica.Addr() + "/0", `(?m)^FAILED redis redis://` + regexp.QuoteMeta(replica.Addr()) + `/0: redis\.keyPrefix "mcpgw:": write: .*READONLY`},
		{"redis://reader:" + password + "@" + primary.Addr() + "/0", `(?m)^FAILED redis redis://REDACTED@.*: redis\.keyPrefix "mcpgw:": write: .*NOPERM`},
		{"redis://noscript:" + password + "@" + primary.Addr() + "/0", `(?m)^FAILED redis redis://REDACTED@.*: redis\.keyPrefix "mcpgw:": script \(rate limit\): .*NOPERM`},
	} {
		checkOnlineLines(t, "redis: {url: \""+tc.url+"\"}\n", strings.Contains(tc.want, "FAILED"), []string{tc.want}, password)
	}
	// The written keys (of the primary's and the scriptless user's probes) are deleted at
	// once; the rate-limit probe's bucket and its charge's marker, of the primary's probe
	// alone, expire on their own.
	if n, err := primary.Do("DBSIZE"); err != nil || n != "0" && n != "1" && n != "2" {
		t.Errorf("keys left behind: %s, %v", n, err)
	}
}
