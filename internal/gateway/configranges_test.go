package gateway

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcp-gateway/gateway/internal/configerr"
	"github.com/mcp-gateway/gateway/internal/configyaml"
	"github.com/mcp-gateway/gateway/internal/seal"
	"github.com/mcp-gateway/gateway/internal/store"
	"github.com/mcp-gateway/gateway/mrtr"
)

// TestConfigRanges: for every ranged setting, a value just outside each bound is refused under
// the setting's key path, naming the value and the range, and the bound itself is accepted.
func TestConfigRanges(t *testing.T) {
	for generic, r := range configRanges() {
		path := strings.ReplaceAll(generic, "[]", "[0]")
		for _, tt := range []struct {
			v      int64
			refuse bool
		}{{r.min - 1, true}, {r.min, false}, {r.max, false}, {r.max + 1, true}} {
			if tt.v <= 0 {
				continue // zero and negative values keep the meaning their own checks give them
			}
			c := newConfig()
			c.Upstreams = []UpstreamConfig{{}}
			c.Upstreams[0].Name, c.Upstreams[0].URL = "a", "http://127.0.0.1:1/mcp"
			c.applyDefaults()
			setRanged(t, reflect.ValueOf(&c).Elem(), generic, tt.v)
			var got []string
			for _, err := range configerr.List(c.validate()) {
				if p, _ := configerr.PathOf(err); p == path {
					got = append(got, err.Error())
				}
			}
			want := path + ": " + r.text(tt.v) + ": want 0 (its documented meaning) or " + r.String()
			switch {
			case tt.refuse && !slices.Contains(got, want):
				t.Errorf("%s = %s: problems %q, want %q", path, r.text(tt.v), got, want)
			case !tt.refuse && len(got) > 0:
				t.Errorf("%s = %s (a bound): refused: %q", path, r.text(tt.v), got)
			}
		}
	}
}

// setRanged sets the setting at generic key path under v to n, making the blocks and the first
// list entry it lies in.
func setRanged(t *testing.T, v reflect.Value, generic string, n int64) {
	t.Helper()
	for key := range strings.SplitSeq(generic, ".") {
		key, list := strings.CutSuffix(key, "[]")
		v = fieldByKey(t, v, key, generic)
		if list {
			if v.Len() == 0 {
				v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
			}
			v = v.Index(0)
		}
	}
	v.SetInt(n)
}

// fieldByKey is the field read from key of the struct v (through a pointer, made if nil).
func fieldByKey(t *testing.T, v reflect.Value, key, generic string) reflect.Value {
	t.Helper()
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	for _, f := range configyaml.Fields(v.Type()) {
		if f.Key == key && f.Index != nil {
			for i := range f.Index {
				if w := v.FieldByIndex(f.Index[:i+1]); w.Kind() == reflect.Pointer && w.IsNil() {
					w.Set(reflect.New(w.Type().Elem()))
				}
			}
			out, err := v.FieldByIndexErr(f.Index)
			if err != nil {
				t.Fatalf("%s: %v", generic, err)
			}
			if out.Kind() == reflect.Pointer {
				if out.IsNil() {
					out.Set(reflect.New(out.Type().Elem()))
				}
				out = out.Elem()
			}
			return out
		}
	}
	t.Fatalf("%s: no key %q in %s", generic, key, v.Type())
	return reflect.Value{}
}

// TestConfigRangesInOnePass: check-config refuses, in one pass, each of the values that made
// the gateway unusable, naming each key path, its range and the value given.
func TestConfigRangesInOnePass(t *testing.T) {
	yaml := "server: {writeTimeout: 1ns, maxHeaderBytes: 1}\nmrtr: {maxTokenBytes: 1}\nlegacy: {batchConcurrency: 100000}\n"
	err := checkConfigYAML(t, yaml)
	for _, want := range []string{
		"server.writeTimeout: 1ns: want 0 (its documented meaning) or 10ms to 1h",
		"server.maxHeaderBytes: 1: want 0 (its documented meaning) or 8192 to 16777216",
		"mrtr.maxTokenBytes: 1: want 0 (its documented meaning) or 1024 to 1048576",
		"legacy.batchConcurrency: 100000: want 0 (its documented meaning) or 1 to 64",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

// TestMinTokenBytesHoldsAState: the least mrtr.maxTokenBytes accepted seals a confirmation
// state of a caller whose issuer, subject and tool name are of a common length, so the floor
// leaves the feature working.
func TestMinTokenBytesHoldsAState(t *testing.T) {
	ring, _, err := MRTRConfig{Keys: testKeys, MaxTokenBytes: minTokenBytes}.keyRing(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	replays, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	codec, err := mrtr.New(ring.Sealer(seal.PurposeRequestState), mrtr.Config{}, replays, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := mrtr.State{Kind: mrtr.KindConfirm, Issuer: "https://login.example.com/realms/engineering",
		Subject: "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", Upstream: "github", Method: mrtr.MethodToolsCall,
		Name: "github__create_pull_request_review_comment"}
	if _, err := codec.Seal(st); err != nil {
		t.Fatalf("a minimal state does not seal within %d bytes: %v", minTokenBytes, err)
	}
}

// TestUnexpandedVariableHint: a URL setting written with a shell-style reference to an
// environment variable, which the file does not expand, is refused with a hint naming the
// forms that read the environment, whether or not the value otherwise parses as a URL.
func TestUnexpandedVariableHint(t *testing.T) {
	tests := []struct{ yaml, path, want string }{
		{"upstreams: [{name: a, url: \"${UPSTREAM_URL}\"}]\n", "upstreams[0].url",
			"does not expand environment variables such as ${UPSTREAM_URL}: write the value itself; a secret is read from the environment as {env: NAME}, and MCPGW_UPSTREAMS (NAME=URL,…) adds backends"},
		{"upstreams: [{name: a, url: \"http://127.0.0.1:1/$MCP_PATH\"}]\n", "upstreams[0].url", "such as $MCP_PATH"},
		{"server: {publicURL: \"https://${HOST}/mcp\"}\n", "server.publicURL", "such as ${HOST}: write the value itself; a secret is read from the environment as {env: NAME}, and MCPGW_PUBLIC_URL sets server.publicURL"},
		{"redis: {url: $REDIS_URL}\n", "redis.url", "such as $REDIS_URL"},
		{"tracing: {endpoint: \"${OTLP}\"}\n", "tracing.endpoint", "such as ${OTLP}"},
		{"auth: {resourceMetadata: {resource: \"https://${HOST}/mcp\"}}\n", "auth.resourceMetadata.resource", "such as ${HOST}"},
		{"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\", auth: {type: userOAuth, authServer: \"${AS}\", resource: $RES}}]\n",
			"upstreams[0].auth.authServer", "such as ${AS}"},
		{"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\", auth: {type: userOAuth, resource: $RES}}]\n",
			"upstreams[0].auth.resource", "such as $RES"},
		{"auth: {issuers: [{issuer: \"https://idp.example.com\", audiences: [\"${AUD}\"]}]}\n", "auth.issuers[0].audiences[0]", "such as ${AUD}"},
		{"admin: {listen: \"$ADMIN_LISTEN\"}\n", "admin.listen", "such as $ADMIN_LISTEN"},
		{"mrtr: {keys: [{id: k1, secret: {value: \"${MRTR_KEY_OF_AT_LEAST_THIRTY_TWO_BYTES}\"}}]}\n", "mrtr.keys[0].secret.value",
			"refers to an environment variable ($NAME or ${NAME}), which the configuration does not expand"},
		{"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\", headers: {Authorization: {value: \"Bearer $TOKEN\"}}}]\n",
			"upstreams[0].headers.Authorization.value", "refers to an environment variable"},
		{"tracing: {endpoint: \"http://127.0.0.1:4318\", headers: {X-Key: {file: \"$HOME/key\"}}}\n", "tracing.headers.X-Key.file",
			"such as $HOME: write the path itself"},
	}
	for _, tt := range tests {
		err := checkConfigYAML(t, tt.yaml)
		var hinted int
		for _, e := range configerr.List(err) {
			// One block's problems may come as one error, a line each.
			for line := range strings.Lines(e.Error()) {
				if strings.Contains(line, ": "+tt.path+": ") && strings.Contains(line, tt.want) {
					hinted++
				}
			}
		}
		if hinted != 1 {
			t.Errorf("%q: err = %v, want one problem at %s with %q", tt.yaml, err, tt.path, tt.want)
		}
	}
	// A password that holds a $ but no reference of its own is a password.
	for _, v := range []string{"pa$$word-of-at-least-32-bytes-long!", "x$Ab9-of-at-least-32-bytes-long-key", "$5tart-of-at-least-32-bytes-long-k"} {
		if err := checkConfigYAML(t, "mrtr: {keys: [{id: k1, secret: {value: \""+v+"\"}}]}\n"); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
}

// checkConfigYAML is what check-config says of the file yaml, given one more backend on the
// command line and no authentication.
func checkConfigYAML(t *testing.T, yaml string) error {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig("check-config", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
		"--upstream", "z=http://127.0.0.1:1/mcp"}, func(string) string { return "" }, io.Discard)
	return err
}

// TestNumberSettingsHaveRanges: every number and duration setting has a range here, or its
// package's own check bounds it, or any value it takes has a meaning; a new setting must take
// one of the three.
func TestNumberSettingsHaveRanges(t *testing.T) {
	own := []string{ // bounded by the check of their block, which names the range
		"server.maxBodyBytesInFlight", "server.maxInterceptorAnswerBytesInFlight", "server.search.maxResults",
		"server.perClient.maxBodyBytesInFlight", "auth.clockSkew", "auth.dpop.window", "auth.dpop.nonce.lifetime",
		"mrtr.ttl", "mrtr.maxAnswersPerCaller", "redis.breaker.cooldown", "redis.waitTimeout", "healthInterval",
		"pageSize", "cache.maxEntries", "cache.maxBytes", "upstreams[].retry.attempts", "upstreams[].breaker.minCallers",
		"upstreams[].breaker.trackedCallers", "interceptors[].breaker.minCallers", "interceptors[].breaker.trackedCallers",
		"tracing.sampleRatio", "toolsets[].search.maxResults", "approval.sessionTTL", "approval.maxPendingPerCaller",
		"approval.maxPendingBytesPerCaller", "userOAuth.consentTTL", "userOAuth.recordIdle", "userOAuth.recordMaxAge",
		"userOAuth.refreshCooldown", "legacy.maxBatchMessages", "interceptors[].timeout",
		"interceptors[].maxConcurrentPerCaller", "server.clientIPv6Prefix",
	}
	meaning := []string{ // any value has a meaning: an index, an order, a count of replicas, a weight
		"redis.db", "redis.maxRetries", "redis.waitReplicas", "redis.breaker.failures", "rateLimit.lease",
		"interceptors[].priority", "search.embeddings.dimensions", "search.embeddings.weight", "search.embeddings.rrfK",
	}
	ranges := configRanges()
	listed := slices.Concat(own, meaning)
	docs, err := configyaml.ReadDocs(reflect.TypeFor[Config](), module, configDocsRoot)
	if err != nil {
		t.Fatal(err)
	}
	var numbers []string
	numberPaths(configSchema(docs), "", &numbers)
	for _, p := range numbers {
		_, ranged := ranges[p]
		if ranged == slices.Contains(listed, p) {
			t.Errorf("%s: want either a range in configRanges or a place in one of this test's lists, not both", p)
		}
	}
	for p := range ranges {
		if !slices.Contains(numbers, p) {
			t.Errorf("%s: a range for no number or duration setting", p)
		}
	}
}

// numberPaths appends to out the generic key path of each number and duration setting of s.
func numberPaths(s *jsonschema.Schema, path string, out *[]string) {
	if s.Type == "integer" || s.Type == "number" || s.Pattern == configyaml.DurationPattern {
		*out = append(*out, path)
	}
	for key, p := range s.Properties {
		numberPaths(p, joinKey(path, key), out)
	}
	if s.Items != nil {
		numberPaths(s.Items, path+"[]", out)
	}
}

// TestRelativeFilesReadFromTheWorkingDirectory: a relative file path is read from the
// gateway's working directory, not from the configuration file's (docs/configuration.md), so
// check-config run from elsewhere reads other files: a secret beside the file is not found from
// another directory, and one in the working directory is.
func TestRelativeFilesReadFromTheWorkingDirectory(t *testing.T) {
	confDir, workDir := t.TempDir(), t.TempDir()
	writeSecretFile(t, confDir, "token", "beside the file")
	file := filepath.Join(confDir, "config.yaml")
	yaml := "upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\", headers: {X-Key: {file: token}}}]\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(workDir)
	check := func() error {
		_, err := loadConfig("check-config", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0"},
			func(string) string { return "" }, io.Discard)
		return err
	}
	if err := check(); err == nil || !strings.Contains(err.Error(), "upstreams[0].headers.X-Key") {
		t.Errorf("the token beside the file was read from another working directory: %v", err)
	}
	writeSecretFile(t, workDir, "token", "in the working directory")
	if err := check(); err != nil {
		t.Errorf("the token in the working directory was not read: %v", err)
	}
}
