package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/testsupport/certtest"
	"github.com/mcp-gateway/gateway/internal/testsupport/mcptest"
)

// The configuration generator: every setting of the Config types, reached by reflection (so a
// setting added later is generated too), set to values an operator could write, valid and
// broken, a few at a time on top of a configuration that starts.

// agreeBases are the configurations the generated ones start from, each of which starts as it
// is: a small one, and one with every feature on (ISSUER and GOODFILE stand for the test's issuer and
// a usable secret file).
var agreeBases = []string{`server: {listen: "127.0.0.1:0", drainDelay: 0s, publicURL: "http://127.0.0.1:8080/mcp"}
admin: {listen: "127.0.0.1:0"}
auth: {disabled: true}
upstreams: [{name: a, url: "http://127.0.0.1:1/mcp"}]
`, `server:
  listen: "127.0.0.1:0"
  drainDelay: 0s
  publicURL: "http://127.0.0.1:8080/mcp"
  draftErrors: [denials, rateLimited]
  serverCard: {enabled: true, name: com.example/gw, aiCatalog: true}
  search: {enabled: true, maxResults: 10, alwaysVisible: ["a__get_*"]}
admin: {listen: "127.0.0.1:0", token: {file: GOODFILE}, explain: {enabled: true}}
auth:
  issuers: [{issuer: ISSUER, dpop: allowed}]
  dpop: {mode: allowed}
  policy:
    rules:
      - {id: r1, upstream: a, tools: ["get_*"], anyScope: [s], confirm: url, confirmFallback: clientForm, rateLimit: 60/m}
      - {id: r2, upstream: b, tools: ["*"], confirm: true, listWithoutScopes: true, allScopes: [t]}
      - {id: r3, effect: deny, tools: ["admin_*"]}
mrtr: {keys: [{id: k1, secret: {file: GOODFILE}}]}
rateLimit: {perCaller: 600/m}
apps: {enabled: true}
approval: {clientID: pages, clientSecret: {env: AGREE_GOOD}}
userOAuth: {keys: [{id: v1, secret: {file: GOODFILE}}]}
pins: {mode: tofu, actions: {new: log}, backends: {b: {mode: off}}}
toolsets:
  - {name: ro, include: [{upstream: a, tools: ["get_*"]}], search: {enabled: true}}
interceptors:
  - {name: dlp, url: "http://127.0.0.1:1/mcp", type: validation, rules: [{upstream: a, tools: ["*"], phases: [request]}]}
  - {name: red, url: "http://127.0.0.1:1/hook", webhook: true, type: mutation, failOpen: true, rules: [{tools: ["*"], phases: [response]}]}
guardrails:
  rules:
    - {id: g, upstream: a, tools: ["*"], validate: {arguments: block}, arguments: {secrets: redact}, results: {injection: flag}}
upstreams:
  - {name: a, url: "http://127.0.0.1:1/mcp", headers: {X-Key: {env: AGREE_GOOD}}}
  - {name: b, url: "http://127.0.0.1:2/mcp", auth: {type: userOAuth, clientID: c, scopes: [read]}}
`}

// agreeFiles are the files and variables the generated settings name: usable ones, and ones
// that are missing, empty, too short or not what they should be.
type agreeFiles struct {
	files   []string // any file a *File setting may name
	good    string   // a usable secret file
	secrets []Secret
	env     map[string]string
}

func newAgreeFiles(t *testing.T) agreeFiles {
	t.Helper()
	dir := t.TempDir()
	ca := certtest.NewCA(t)
	pair := ca.Issue(t, certtest.Leaf{})
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert, key, caFile := write("tls.crt", pair.CertPEM), write("tls.key", pair.KeyPEM), write("ca.pem", ca.CertPEM())
	good := write("good.secret", []byte(strings.Repeat("k3yMaterial", 4)+"\n"))
	short := write("short.secret", []byte("short\n"))
	empty := write("empty", nil)
	garbage := write("garbage", []byte("\x00\xff not PEM, not YAML: [\n"))
	missing := filepath.Join(dir, "missing")
	return agreeFiles{
		good:  good,
		files: []string{cert, key, caFile, good, short, empty, garbage, missing, "", dir},
		secrets: []Secret{{File: good}, {File: short}, {File: empty}, {File: missing}, {File: dir},
			{Env: "AGREE_GOOD"}, {Env: "AGREE_UNSET"}, {Env: "AGREE_LINE"},
			{Value: strings.Repeat("Inl1neSecret", 4)}, {Value: "tiny"}, {Value: "v", Env: "AGREE_GOOD"}, {}},
		env: map[string]string{"AGREE_GOOD": strings.Repeat("EnvSecret9", 5), "AGREE_LINE": "two\nlines of secret text, long enough"},
	}
}

func (f agreeFiles) getenv(k string) string { return f.env[k] }

// leak returns the secret text msg repeats, if any: a variable's value, an inline value or the
// text of a secret file (the short ones are words an error may well use).
func (f agreeFiles) leak(msg string) string {
	texts := []string{strings.Repeat("k3yMaterial", 4), "two\nlines", "lines of secret text", "Pa55wordInURL99"}
	for _, v := range f.env {
		texts = append(texts, v)
	}
	for _, s := range f.secrets {
		if len(s.Value) >= 16 {
			texts = append(texts, s.Value)
		}
	}
	for _, s := range texts {
		if strings.Contains(msg, s) {
			return s
		}
	}
	return ""
}

// configMutator sets random settings of a Config.
type configMutator struct {
	rng   *rand.Rand
	files agreeFiles
	urls  []string
	bases []string // agreeBases with the test's issuer and files
}

var agreeWords = []string{"", "a", "b", "A_B", "a/b", "*", "get_*", "x.y", "-", "required", "allowed", "off", "url",
	"form", "true", "denials", "rateLimited", "60/m", "5/s", "0/m", "clientForm", "deny", "allow", "debug", "text",
	"tokenExchange", "userOAuth", "clientCredentials", "lockfile", "tofu", "shadow", "enforce", "webhook",
	"interceptor", "secrets", "pii", "injection", "schema", "block", "redact", "warn", "com.example/x", "ü", " a ",
	"a\nb", "X-Api-Key", "Authorization", "tools/call", "RS256", "ES256", "/mcp", "/x", "__", "mcp-gateway"}

var agreeDurations = []time.Duration{0, 1, -time.Second, time.Millisecond, time.Second, 30 * time.Second, 10 * time.Minute, 1000 * time.Hour}

var agreeInts = []int64{0, 1, -1, 2, 3, 17, 100, 1 << 20, math.MaxInt32, 1 << 40, math.MaxInt64}

var secretType = reflect.TypeFor[Secret]()

// mutate sets one random setting under v (a struct) and returns its key path.
func (m *configMutator) mutate(v reflect.Value, path string) string {
	fields := settableFields(v)
	if len(fields) == 0 {
		return ""
	}
	f := fields[m.rng.IntN(len(fields))]
	return m.set(f.v, join(path, f.name), f.name)
}

// set gives v, the setting at path named name, a random value, descending into blocks and lists.
func (m *configMutator) set(v reflect.Value, path, name string) string {
	if v.Type() == secretType {
		v.Set(reflect.ValueOf(m.files.secrets[m.rng.IntN(len(m.files.secrets))]))
		return path
	}
	switch v.Kind() {
	case reflect.Struct:
		return m.mutate(v, path)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return m.set(v.Elem(), path, name)
	case reflect.Slice:
		if v.Len() == 0 || m.rng.IntN(3) == 0 {
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		}
		i := m.rng.IntN(v.Len())
		return m.set(v.Index(i), fmt.Sprintf("%s[%d]", path, i), name)
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		k := reflect.New(v.Type().Key()).Elem()
		m.set(k, path, "key")
		e := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(k); old.IsValid() {
			e.Set(old)
		}
		p := m.set(e, path+"."+fmt.Sprint(k.Interface()), name)
		v.SetMapIndex(k, e)
		return p
	}
	m.setLeaf(v, name)
	return path
}

// setLeaf sets a scalar to one of the values an operator could write for a setting named name.
func (m *configMutator) setLeaf(v reflect.Value, name string) {
	r := m.rng
	lower := strings.ToLower(name)
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		v.SetInt(int64(agreeDurations[r.IntN(len(agreeDurations))]))
	case v.Kind() == reflect.String:
		v.SetString(m.word(lower))
	case v.Kind() == reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case v.CanInt():
		n := agreeInts[r.IntN(len(agreeInts))]
		if v.OverflowInt(n) {
			n = 1
		}
		v.SetInt(n)
	case v.CanUint():
		n := uint64(agreeInts[r.IntN(len(agreeInts))])
		if v.OverflowUint(n) {
			n = 2
		}
		v.SetUint(n)
	case v.CanFloat():
		v.SetFloat([]float64{0, 0.5, 1, 2, -1}[r.IntN(5)])
	}
}

func (m *configMutator) word(lower string) string {
	r := m.rng
	switch {
	case strings.HasSuffix(lower, "file") || strings.HasSuffix(lower, "dir"):
		return m.files.files[r.IntN(len(m.files.files))]
	case strings.Contains(lower, "url") || strings.Contains(lower, "issuer") || strings.Contains(lower, "endpoint") ||
		strings.Contains(lower, "uri") || lower == "resource":
		return m.urls[r.IntN(len(m.urls))]
	case strings.Contains(lower, "listen") || strings.Contains(lower, "addr"):
		return []string{"127.0.0.1:0", ":0", "localhost:0", "[::1]:0", "127.0.0.1", ""}[r.IntN(6)]
	}
	return agreeWords[r.IntN(len(agreeWords))]
}

type agreeField struct {
	name string
	v    reflect.Value
}

// settableFields lists the settings of the struct v by their key in the file, those of inline
// blocks included.
func settableFields(v reflect.Value) []agreeField {
	var out []agreeField
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if tag == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			out = append(out, settableFields(v.Field(i))...)
			continue
		}
		if tag == "" {
			tag = strings.ToLower(sf.Name)
		}
		out = append(out, agreeField{tag, v.Field(i)})
	}
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// generated is one generated configuration, before the defaults, and the settings it changed.
func (m *configMutator) generate(t *testing.T) (*Config, []string) {
	t.Helper()
	c := newConfig()
	if err := decodeYAML(strings.NewReader(m.bases[m.rng.IntN(len(m.bases))]), &c); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for range 1 + m.rng.IntN(3) {
		if p := m.mutate(reflect.ValueOf(&c).Elem(), ""); p != "" {
			paths = append(paths, p)
		}
	}
	c.applyDefaults()
	return &c, paths
}

// TestCheckConfigAgreesWithServe: on generated configurations, whatever check-config accepts
// serve builds (every component, up to binding its ports): a setting that only building the
// gateway refuses is a configuration that passes check-config and then crash-loops.
func TestCheckConfigAgreesWithServe(t *testing.T) {
	m, files := newAgreeMutator(t)
	log := slog.New(slog.DiscardHandler)
	accepted, failures, cases := 0, 0, agreeCases(t)
	for i := range cases {
		cfg, paths := m.generate(t)
		if err := cfg.check(files.getenv, checkMachine); err != nil {
			if leak := files.leak(err.Error()); leak != "" {
				t.Errorf("case %d, settings %v: the error repeats the secret %q:\n%v", i, paths, leak, err)
			}
			continue
		}
		accepted++
		g, err := prepareRecovering(cfg, files.getenv, log)
		if err != nil {
			failures++
			if failures <= 10 {
				t.Errorf("case %d: check-config accepts, serve refuses; settings %v:\n%v", i, paths, err)
			}
			continue
		}
		g.close()
	}
	t.Logf("%d of %d generated configurations accepted", accepted, cases)
	if accepted < cases/10 {
		t.Errorf("only %d of %d generated configurations accepted: the generator tests little", accepted, cases)
	}
}

// prepareRecovering is prepare with a panic returned as an error, so that one run reports every
// setting that crashes the gateway.
// A configuration whose numbers size memory reserved at start-up (a cache's capacity, say) gets
// it only as it is used: building the gateway takes less than maxBuildBytes whatever they say.
func prepareRecovering(cfg *Config, getenv func(string) string, log *slog.Logger) (g *gateway, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("serve panics: %v", r)
		}
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g, _, err = prepare(cfg, getenv, log)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; err == nil && n > maxBuildBytes {
		g.close()
		return nil, fmt.Errorf("building the gateway allocated %d MiB", n>>20)
	}
	return g, err
}

// maxBuildBytes bounds what building one configuration allocates: many times what the defaults
// take, far below what a setting sized without a bound reserves.
const maxBuildBytes = 64 << 20

// newAgreeMutator returns a generator of configurations whose bases all pass check-config, and
// the files and variables its settings name.
func newAgreeMutator(t *testing.T) (*configMutator, agreeFiles) {
	t.Helper()
	files := newAgreeFiles(t)
	iss := newIssuer(t)
	m := &configMutator{rng: rand.New(rand.NewPCG(agreeSeed(t), 0)), files: files,
		urls: []string{"http://127.0.0.1:1/mcp", "https://user:Pa55wordInURL99@idp.example.com/", "redis://:Pa55wordInURL99@127.0.0.1:1/x", "https://idp.example.com/", iss.URL(), "not a url", "ftp://x/",
			"redis://127.0.0.1:1/0", "http://[::1", "https://a.example/x?y#z", ""}}
	for i, b := range agreeBases {
		b = strings.NewReplacer("ISSUER", iss.URL(), "GOODFILE", files.good).Replace(b)
		m.bases = append(m.bases, b)
		cfg := newConfig()
		if err := decodeYAML(strings.NewReader(b), &cfg); err != nil {
			t.Fatal(err)
		}
		cfg.applyDefaults()
		if err := cfg.check(files.getenv, checkMachine); err != nil {
			t.Fatalf("base %d is refused: %v", i, err)
		}
	}
	return m, files
}

// agreeCases is how many configurations a run generates: a few seconds' worth under the race
// detector. MCPGW_AGREE_CASES asks for more, to hunt (TestReloadAgreesWithCheckConfig makes half
// as many reloads).
func agreeCases(t *testing.T) int {
	n := 300
	if s := os.Getenv("MCPGW_AGREE_CASES"); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// agreeSeed is the generator's seed: MCPGW_AGREE_SEED to replay a run, else a new one, logged.
func agreeSeed(t *testing.T) uint64 {
	var seed uint64
	if s := os.Getenv("MCPGW_AGREE_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &seed); err != nil {
			t.Fatal(err)
		}
	} else {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (MCPGW_AGREE_SEED to replay)", seed)
	return seed
}

// TestLargeCacheSizeReservesNothing: the largest cache size check-config accepts is a bound, not
// a reservation: serve starts without reserving memory for entries nobody made.
func TestLargeCacheSizeReservesNothing(t *testing.T) {
	iss := newIssuer(t)
	cfg := newConfig()
	yaml := fmt.Sprintf("server: {listen: \"127.0.0.1:0\", publicURL: %q}\nauth: {issuers: [{issuer: %q}], tokenCacheSize: %d}\n"+
		"upstreams: [{name: a, url: \"http://127.0.0.1:1/mcp\"}]\n", testResource, iss.URL(), configRanges()["auth.tokenCacheSize"].max)
	if err := decodeYAML(strings.NewReader(yaml), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.applyDefaults()
	getenv := func(string) string { return "" }
	if err := cfg.check(getenv, checkMachine); err != nil {
		t.Fatal(err)
	}
	g, err := prepareRecovering(&cfg, getenv, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	g.close()
}

// TestReloadAgreesWithCheckConfig: on generated configurations, a SIGHUP reload of a running
// gateway refuses what check-config refuses, with the same errors, and applies what it accepts,
// but for the two refusals docs/deploy.md describes (a setting that needs a restart would break
// the new configuration, or an issuer's keys cannot be fetched). After every refusal the running
// configuration still serves.
func TestReloadAgreesWithCheckConfig(t *testing.T) {
	m, files := newAgreeMutator(t)
	base := newConfig()
	if err := decodeYAML(strings.NewReader(m.bases[len(m.bases)-1]), &base); err != nil {
		t.Fatal(err)
	}
	base.applyDefaults()
	pending := make(chan *Config, 1)
	load := func() (*Config, error) {
		c := <-pending
		if err := c.preflight(files.getenv); err != nil {
			return nil, err
		}
		return c, nil
	}
	hup, results := make(chan os.Signal), make(chan error)
	gw := runAgreeGateway(t, &base, files.getenv, &reloadSource{load: load, trigger: hup, results: results})
	mcptest.WaitFor(t, "the gateway to be ready", func() bool { return agreeReady(t, gw.Admin) == http.StatusOK })
	goroutines := runtime.NumGoroutine()
	refused, applied, reloads := 0, 0, agreeCases(t)/2
	for i := range reloads {
		cfg, paths := m.generate(t)
		checkErr := cfg.check(files.getenv, checkMachine)
		pending <- cfg
		hup <- syscall.SIGHUP
		err := <-results
		switch {
		case checkErr != nil && (err == nil || err.Error() != checkErr.Error()):
			t.Errorf("case %d, settings %v: check-config refuses:\n%v\nthe reload: %v", i, paths, checkErr, err)
		case checkErr == nil && err != nil && !legitReloadRefusal(err):
			t.Errorf("case %d, settings %v: check-config accepts, the reload refuses:\n%v", i, paths, err)
		}
		if err != nil {
			refused++
		} else {
			applied++
		}
		if code := agreeReady(t, gw.Admin); code != http.StatusOK {
			t.Fatalf("case %d, settings %v: after the reload (%v) /readyz says %d", i, paths, err, code)
		}
	}
	t.Logf("%d reloads applied, %d refused", applied, refused)
	// A storm of reloads leaves nothing behind: every replaced set retires.
	mcptest.WaitFor(t, "the replaced configurations to retire", func() bool {
		return runtime.NumGoroutine() <= goroutines+agreeSlack
	})
	if applied < reloads/10 {
		t.Errorf("only %d of %d reloads applied: the generator tests little", applied, reloads)
	}
}

// agreeSlack is how many goroutines more than before the reloads a gateway may run after them:
// the running set's own work may differ from the first one's (a backend added, say).
const agreeSlack = 20

// legitReloadRefusal reports whether err is a refusal of a reload that check-config cannot
// foresee: the settings only a restart changes keep their running values, and the new issuers'
// keys must be in hand.
func legitReloadRefusal(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "invalid configuration with the running values of the settings that need a restart") ||
		strings.Contains(msg, "keys") && strings.Contains(msg, "issuer")
}

// runAgreeGateway serves cfg, reloading from src, until the test ends.
func runAgreeGateway(t *testing.T, cfg *Config, getenv func(string) string, src *reloadSource) Listeners {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan Listeners, 1)
	done := make(chan error, 1)
	logs := &mcptest.LogBuffer{}
	go func() { done <- run(ctx, cfg, runOptions{getenv: getenv, stderr: logs, started: started, reload: src}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case gw := <-started:
		return gw
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return Listeners{}
}

// agreeReady is the status of the admin listener's /readyz.
func agreeReady(t *testing.T, admin string) int {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
