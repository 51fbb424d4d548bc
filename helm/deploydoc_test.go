package helm

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// deployDoc is the operator's guide every claim of which is checked here.
const deployDoc = "docs/deploy.md"

// deployClaim is one claim of docs/deploy.md: the opening words of the paragraph, list item or
// table row that makes it, exactly as written there, and the tests that check it, as
// "<directory>:<function>" (a Test function, or a check function those tests run). A paragraph
// that makes no claim about this project (it addresses the reader, or describes what a client
// or identity provider does) says why in note instead.
type deployClaim struct {
	opens string
	tests []string
	note  string
}

var deployClaims = []deployClaim{
	{opens: "`gateway check-config --config FILE --online` contacts everything outside the", tests: []string{"internal/gateway:TestCheckConfigOnline", "internal/gateway:TestCheckConfigOnlineInterceptors", "internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth", "internal/gateway:TestRunOnlineBounded", "internal/gateway:TestCheckConfigOnlineRedisWritable", "internal/gateway:TestCheckConfigOnlineTracing"}},
	{opens: "| `auth.issuers[i]` |", tests: []string{"internal/gateway:TestCheckConfigOnline"}},
	{opens: "| `redis` | connecting with the configured credentials", tests: []string{"internal/gateway:TestCheckConfigOnlineRedis", "internal/gateway:TestCheckConfigOnlineRedisKeyPrefix"}},
	{opens: "| `upstreams[i]` | `server/discover`", tests: []string{"internal/gateway:TestCheckConfigOnline", "internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth"}},
	{opens: "| `upstreams[i].auth` (per-user OAuth) |", tests: []string{"internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth"}},
	{opens: "| `upstreams[i].auth.tokenURL` (token exchange) |", tests: []string{"internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth"}},
	{opens: "| `interceptors[i]`, an Interceptor Server |", tests: []string{"internal/gateway:TestCheckConfigOnlineInterceptors"}},
	{opens: "| `interceptors[i]`, a webhook |", tests: []string{"internal/gateway:TestCheckConfigOnlineInterceptors"}},
	{opens: "| `approval.issuer` |", tests: []string{"internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth"}},
	{opens: "| `search.embeddings` |", tests: []string{"internal/gateway:TestCheckConfigOnlineEmbeddings"}},
	{opens: "| `tracing.endpoint` |", tests: []string{"internal/gateway:TestCheckConfigOnlineSignInAndBackendAuth"}},
	{opens: "The gateway is one static binary, shipped as a distroless image", tests: []string{"helm:TestBuildStatic", "helm:checkRuntimeStage"}},
	{opens: "The image is named in one place, the chart", tests: []string{"helm:TestImageIsTheChartsImage", "helm:checkBuildStage", "helm:TestBuildStatic", "helm:TestBuildStaticUsage"}},
	{opens: "The runtime image is `gcr.io/distroless/static-debian12:nonroot`", tests: []string{"helm:checkRuntimeStage", "internal/gateway:TestAdminListenerDefaults", "internal/gateway:TestAdminAccessConfig", "helm:checkWithGateway"}},
	{opens: "The values without a usable default are an MRTR key", tests: []string{"helm:TestChart", "helm:TestDeployDocExamples"}},
	{opens: "`config` is the gateway's `config.yaml`", tests: []string{"helm:TestValuesTyposRefused", "helm:TestValuesSchemaMatchesTypes"}},
	{opens: "| `server.listen`, `admin.listen` |", tests: []string{"helm:checkCommon", "helm:TestChart"}},
	{opens: "| `admin.token` |", tests: []string{"helm:checkCommon", "helm:checkMinimal", "helm:checkMounts"}},
	{opens: "| `server.tls` |", tests: []string{"helm:checkGatewayTLS", "helm:checkIngressTLS"}},
	{opens: "| `server.drainDelay`, `server.shutdownTimeout` |", tests: []string{"helm:checkDrain", "helm:checkHA"}},
	{opens: "| `server.publicURL` when empty |", tests: []string{"helm:checkIngressTLS"}},
	{opens: "| `mrtr` |", tests: []string{"helm:checkMinimal", "helm:checkHA"}},
	{opens: "| `redis.url`, `redis.password` |", tests: []string{"helm:checkHA", "helm:checkGatewayTLS", "helm:TestRedisSettingsOfTheOperator"}},
	{opens: "The config is mounted at `/etc/mcp-gateway/config.yaml`", tests: []string{"helm:checkMounts", "helm:TestChart", "internal/gateway:TestDeployEnvironmentOverridesFile"}},
	{opens: "The Ingress also routes the gateway's own paths on every host", tests: []string{"helm:TestIngressRoutesTheGatewaysPaths", "helm:checkApproval", "helm:checkUserOAuth"}},
	{opens: "The pods run as user 65532 with a read-only root filesystem", tests: []string{"helm:checkSecurity"}},
	{opens: "**Memory.** The chart sets `GOMEMLIMIT`", tests: []string{"helm:TestGoMemLimit"}},
	{opens: "**No session affinity.**", tests: []string{"helm:checkService", "helm:checkIngressTLS", "internal/testsupport/replicatest:TestReplicas"}},
	{opens: "**Redis for more than one replica.**", tests: []string{"internal/gateway:TestDeployConfirmationsAcrossReplicas", "internal/testsupport/replicatest:TestReplicas", "helm:TestChart", "helm:checkInternalRedis"}},
	{opens: "**Timeouts for streamed responses.**", tests: []string{"helm:checkIngressTLS"}},
	{opens: "| `proxy-buffering` | `off` |", tests: []string{"helm:checkIngressTLS", "internal/gateway:TestDeployStreamsUnbuffered"}},
	{opens: "| `proxy-read-timeout`, `proxy-send-timeout` |", tests: []string{"helm:checkIngressTLS"}},
	{opens: "| `proxy-body-size` |", tests: []string{"helm:checkIngressTLS"}},
	{opens: "| `backend-protocol` | `HTTPS` |", tests: []string{"helm:checkGatewayTLS", "helm:checkIngressTLS"}},
	{opens: "**Between the gateway and a backend**, the gateway keeps idle keep-alive connections", tests: []string{"upstreams:TestIdleConnTimeoutPerUpstream", "upstreams/backend:TestIdleConnTimeoutConfigured", "upstreams/direct:TestDirectRetriesOnlyWhatWasNotWritten", "upstreams/backend:TestPoolLetsGoBeforeCommonServers"}},
	{opens: "For another load balancer, set the equivalents", tests: []string{"internal/gateway:TestProtectedResourceMetadata", "helm:checkIngressTLS"}},
	{opens: "**Client addresses: `server.trustedProxies`.**", tests: []string{"internal/gateway:TestPerClientBoundsBehindProxy", "internal/clientaddr:TestClientThroughTrustedProxies", "mcphttp:TestUntrustedProxyHeadersWarnedOnce", "authz:TestKnownOnly"}},
	{opens: "| ingress-nginx (the chart's Ingress) |", note: "what each proxy writes; the gateway's part is the paragraph above"},
	{opens: "| AWS Application Load Balancer |", note: "what each proxy writes; the gateway's part is the paragraph above"},
	{opens: "| Google Cloud external Application Load Balancer |", note: "what each proxy writes; the gateway's part is the paragraph above"},
	{opens: "| Envoy, Istio or Traefik |", note: "what each proxy writes; the gateway's part is the paragraph above"},
	{opens: "| A TCP (layer 4) load balancer straight to the pods |", note: "what each proxy writes; the gateway's part is the paragraph above"},
	{opens: "IPv6 clients are counted by their `server.clientIPv6Prefix`", tests: []string{"internal/clientaddr:TestKeyGroupsIPv6ByPrefix", "internal/clientaddr:TestLimiterBoundedLRU", "internal/gateway:TestPerClientBoundsBehindProxy", "mcphttp:TestAccessLogClientAddress"}},
	{opens: "**Draining.** On termination Kubernetes runs the preStop hook", tests: []string{"helm:checkDrain", "helm:TestPreStopSleep", "helm:checkCommon", "helm:checkMinimal", "internal/testsupport/replicatest:TestReplicas", "internal/gateway:TestShutdownDrains", "internal/gateway:TestShutdownAnswersCutCalls", "internal/gateway:TestListensEndAtOnce", "internal/gateway:TestSIGTERMDrainHandsOver"}},
	{opens: "**At the Ingress (usual).**", tests: []string{"helm:checkIngressTLS", "helm:checkHA"}},
	{opens: "**At the gateway.** For end-to-end TLS", tests: []string{"helm:checkGatewayTLS", "internal/gateway:TestHTTPSCertificateRotation"}},
	{opens: "Either way `config.server.publicURL` must be the exact HTTPS URL", tests: []string{"internal/gateway:TestAttackTable"}},
	{opens: "Configure the host (an agent, IDE or SDK program)", note: "addresses the reader; the steps below say what the gateway answers"},
	{opens: "1. **401 and the challenge.**", tests: []string{"internal/gateway:TestAttackTable", "authz:TestServiceChallenges"}},
	{opens: "2. **Protected resource metadata (RFC 9728).**", tests: []string{"internal/gateway:TestProtectedResourceMetadata", "authz:TestMetadataDocument"}},
	{opens: "3. **Authorization server metadata (RFC 8414).**", note: "what the MCP host asks the identity provider; the gateway is not involved"},
	{opens: "4. **Token with `resource` (RFC 8707).**", note: "the host's OAuth flow with the identity provider; the gateway's part (verifying the audience) is the next paragraph"},
	{opens: "The gateway verifies each token's signature against the issuer's keys", tests: []string{"internal/gateway:TestAttackTable", "internal/gateway:TestRealOpenIDProvider"}},
	{opens: "- register the public URL as an API/resource", tests: []string{"internal/gateway:TestAttackTable"}},
	{opens: "- define the scopes your policy rules use", tests: []string{"internal/gateway:TestAttackTable", "authz:TestServiceChallenges"}},
	{opens: "- make sure the pods can reach the issuer over HTTPS", tests: []string{"internal/gateway:TestIssuerDown", "authz:TestIssuerUnreachable"}},
	{opens: "The gateway never forwards the client's token to a backend.", tests: []string{"internal/gateway:TestDeployBackendCredentials"}},
	{opens: "Each backend gets its own credentials, configured as headers", tests: []string{"internal/gateway:TestDeployBackendCredentials", "helm:checkSingle"}},
	{opens: "Every file under `/etc/mcp-gateway/secrets/` comes from one Secret", tests: []string{"helm:checkMounts", "helm:checkHA", "helm:checkGatewayTLS"}},
	{opens: "Prometheus metrics are on the admin port, `:9090/metrics`", tests: []string{"internal/gateway:TestAdminListenerDefaults", "internal/gateway:TestAdminAccessConfig", "helm:checkCommon", "helm:checkMinimal"}},
	{opens: "The admin port has a Service of its own, `<fullname>-admin`", tests: []string{"helm:TestAdminServiceNeverPublished", "helm:checkSelectors", "helm:checkServiceMonitor", "helm:checkTestPod", "helm:TestNotes"}},
	{opens: "| `/healthz` |", tests: []string{"internal/gateway:TestAdminEndpointsNeedToken", "helm:checkProbes"}},
	{opens: "| `/readyz` |", tests: []string{"internal/gateway:TestAdminEndpointsNeedToken", "mcphttp:TestAdminCredential", "helm:checkProbes", "helm:checkTestPod"}},
	{opens: "| `/metrics`, `/pins` |", tests: []string{"internal/gateway:TestAdminEndpointsNeedToken", "mcphttp:TestAdminCredential"}},
	{opens: "| `/authz/explain` (when enabled) |", tests: []string{"internal/gateway:TestAdminEndpointsNeedToken", "mcphttp:TestAdminCredential"}},
	{opens: "| `/debug/pprof/` |", tests: []string{"mcphttp:TestAdminCredential", "internal/gateway:TestAdminAccessConfig", "helm:TestChart"}},
	{opens: "`networkPolicy.adminFrom` can in addition list the peers", tests: []string{"helm:checkHA", "helm:checkSingle", "helm:TestDeployDocExamples", "internal/gateway:TestAdminEndpointsNeedToken"}},
	{opens: "and call it with `Authorization: Bearer <secret>`", tests: []string{"internal/gateway:TestAdminListenerRequests"}},
	{opens: "Two ways to scrape the metrics:", note: "introduces the list below"},
	{opens: "- **Prometheus Operator**:", tests: []string{"helm:checkServiceMonitor", "helm:checkHA"}},
	{opens: "- **Annotations**:", tests: []string{"helm:checkMinimal", "helm:checkHA", "internal/gateway:TestAdminEndpointsNeedToken"}},
	{opens: "`metrics.prometheusRule.enabled` installs the alerts", tests: []string{"helm:checkPrometheusRule", "helm:checkDashboard", "metrics:TestAlertRulesPromtool"}},
	{opens: "`/readyz` reports the configuration, Redis (when configured: reachable, writable", tests: []string{"internal/gateway:TestRedisRefusingScriptsByACL", "internal/gateway:TestRedisFullFailsAsDocumented", "internal/gateway:TestReadinessRefusesOldRedis", "mcphttp:TestReadyzChecks", "mcphttp:TestReadyzAnswersWithinItsBound", "helm:TestReadinessProbeOutlastsReadyz", "internal/gateway:TestRedisReadiness", "internal/store:TestSubscribedMeansDelivered", "helm:checkProbes", "internal/gateway:TestTypoIssuerNotReady", "internal/gateway:TestIssuerDownAtStartBecomesReady"}},
	{opens: "**With the chart: a rolling restart.**", tests: []string{"helm:checkCommon", "helm:testChecksum"}},
	{opens: "**In place: SIGHUP.**", tests: []string{"internal/gateway:TestReloadOnSIGHUP", "internal/gateway:TestReloadKeepsInFlightSSECall", "internal/gateway:TestReloadPolicyNextRequest", "internal/gateway:TestReloadAcrossReplicasWithRedis", "internal/gateway:TestReloadEndsOldRequestsAfterShutdownTimeout", "internal/gateway:TestReloadRetiresWithTheReplacedTimeout", "internal/gateway:TestReloadKeptStreamFollowsTheNewPolicy", "internal/gateway:TestListensEndAtOnce", "internal/gateway:TestReloadClosesSignInConnections", "internal/useroauth:TestCloseIdleConnections"}},
	{opens: "A configuration with any problem is **refused and the running one stays**", tests: []string{"internal/gateway:TestSIGTERMEndsAReloadReadingAFile", "internal/gateway:TestSIGTERMEndsAReloadFetchingKeys", "internal/gateway:TestReloadRefusesInvalidConfiguration", "internal/gateway:TestConfigHashFollowsTheAppliedFile", "metrics:TestAlertRulesPromtool"}},
	{opens: "Some settings belong to what lives as long as the process", tests: []string{"internal/gateway:TestReloadRestartOnlySettings"}},
	{opens: "| `server.listen`, `admin.listen`, `server.tls`, `server.readHeaderTimeout`", tests: []string{"internal/gateway:TestReloadRestartOnlySettings"}},
	{opens: "| `log` |", tests: []string{"internal/gateway:TestReloadRestartOnlySettings"}},
	{opens: "| `redis` | the shared store's connection |", tests: []string{"internal/gateway:TestReloadRestartOnlySettings"}},
	{opens: "| `tracing` |", tests: []string{"internal/gateway:TestReloadRestartOnlySettings"}},
	{opens: "| a backend or tool set added since start-up |", tests: []string{"internal/gateway:TestReloadAddsBackend"}},
	{opens: "A file these settings read, rewritten under the same name", tests: []string{"internal/gateway:TestReloadNamesRewrittenRestartOnlyFiles", "internal/certreload:TestRunFollowsTheFiles"}},
	{opens: "Everything else applies at once", tests: []string{"internal/gateway:TestReloadPolicyNextRequest", "internal/gateway:TestReloadEndsOldRequestsAfterShutdownTimeout", "internal/gateway:TestReloadRetiresWithTheReplacedTimeout", "internal/gateway:TestReloadKeepsOpenCircuits"}},
	{opens: "While requests finish on the old configuration", note: "states a limit of a reload (the budgets of two configurations for a moment) and advice; the alert it names is tested with the rules"},
	{opens: "To reload in place in Kubernetes, outside this chart", note: "a pattern outside the chart for the reader to set up; the SIGHUP it relies on is the paragraph above"},
	{opens: "A reload reaches every replica within the same minute", note: "advice on choosing between the two ways above, each of which is tested there"},
	{opens: "MRTR `requestState` (the token a client returns", tests: []string{"internal/seal:TestConfigValidate", "helm:TestChart"}},
	{opens: "The list is **oldest first: the last key without `openOnly: true` seals new state, every key", tests: []string{"internal/seal:TestRotation", "internal/seal:TestRotationAcrossReplicas", "internal/gateway:TestDeployKeyRotationAcrossReplicas", "helm:checkHA"}},
	{opens: "1. Add the new key with `openOnly: true` and deploy:", tests: []string{"helm:TestDeployDocExamples", "helm:TestKeyRotationRendered", "internal/vault:TestVault"}},
	{opens: "2. Once that rollout is complete, remove `openOnly` from the new key", tests: []string{"internal/gateway:TestDeployKeyRotationAcrossReplicas", "internal/seal:TestRotationAcrossReplicas"}},
	{opens: "3. Wait until that rollout is complete and then `mrtr.ttl`", tests: []string{"helm:checkMinimal", "mrtr:TestOpenExpiry", "internal/legacysession:TestRotation", "mcphttp/pre2026:TestSessionStateRecordThatDoesNotOpen"}},
	{opens: "4. Remove the old key and deploy again.", note: "an instruction"},
	{opens: "If a key may have leaked, remove it at once instead", tests: []string{"internal/gateway:TestDeployConfirmationsAcrossReplicas", "helm:TestChart"}},
	{opens: "`helm install` and `helm template` stop with a message naming the fix when:", tests: []string{"helm:TestChart"}},
	{opens: "- `replicaCount > 1` or `autoscaling.enabled` without Redis;", tests: []string{"helm:TestChart"}},
	{opens: "- no MRTR key has a secret", tests: []string{"helm:TestChart"}},
	{opens: "- `secrets.existingSecret` is combined with secrets in values", tests: []string{"helm:TestChart"}},
	{opens: "- a CPU or memory request in `resources`", tests: []string{"helm:TestChart"}},
	{opens: "- `extraVolumes` names a volume as the chart's own", tests: []string{"helm:TestExtraVolumes"}},
	{opens: "- `podLabels` sets a label the chart selects its pods by", tests: []string{"helm:TestChart"}},
	{opens: "- a file of `secrets.files` is named as an entry the chart writes", tests: []string{"helm:TestChart"}},
	{opens: "- both `redis.url` and `redis.internal.enabled`", tests: []string{"helm:TestChart"}},
	{opens: "- `config` sets a key the chart manages", tests: []string{"helm:TestChart"}},
	{opens: "- no `adminToken` and no `secrets.existingSecret`", tests: []string{"helm:TestChart"}},
	{opens: "- `terminationGracePeriodSeconds` is not larger than", tests: []string{"helm:TestChart", "helm:checkDrain"}},
	{opens: "- `config.auth.disabled` without `--force`", tests: []string{"helm:TestChart", "helm:checkGatewayTLS"}},
	{opens: "- `tls.enabled` without `tls.secretName`", tests: []string{"helm:TestChart"}},
	{opens: "- no backend in `config.upstreams`", tests: []string{"helm:TestChart"}},
	{opens: "- `pins.lockFile` is not YAML, or has no section for a backend pinned from it", tests: []string{"helm:TestChart"}},
	{opens: "- `metrics.serviceMonitor.interval` or `scrapeTimeout` is not a duration", tests: []string{"helm:TestServiceMonitorDurations"}},
	{opens: "- `networkPolicy.egress` is an empty list", tests: []string{"helm:TestEgressDeniedWholeRefused", "helm:TestEgressReachesTheInChartRedis"}},
	{opens: "- the PodDisruptionBudget lets no pod be evicted", tests: []string{"helm:TestChart", "helm:TestDisruptionBudgetRendered"}},
	{opens: "- a liveness or startup probe's `successThreshold` is not 1", tests: []string{"helm:TestChart"}},
	{opens: "- `containerPorts.mcp` equals `containerPorts.admin`", tests: []string{"helm:TestChart"}},
	{opens: "- the name the resources take (the release name followed by the chart's", tests: []string{"helm:TestResourceNames"}},
	{opens: "- any key of the values is misspelt", tests: []string{"helm:TestValuesTyposRefused", "helm:TestChart"}},
	{opens: "- `config.server.publicURL` is not an http(s) URL", tests: []string{"helm:TestChart", "internal/gateway:TestPublishedURLsCarryNoUserInfo"}},
	{opens: "- a URL with a password in its user information stands in `redis.url`", tests: []string{"helm:TestURLPasswordsStayOutOfTheConfigMap"}},
	{opens: "- a secret of `config` is given inline (`{value: …}`", tests: []string{"helm:TestInlineSecretsRefused"}},
	{opens: "- `extraEnv` gives a literal `value` to a variable the configuration reads a secret from", tests: []string{"helm:TestSecretVariablesNotLiteral"}},
	{opens: "- a setting that takes one of a few words", tests: []string{"helm:TestChart", "helm:TestValuesSchemaMatchesTypes"}},
	{opens: "The chart needs Kubernetes 1.30 or later", tests: []string{"helm:checkDrain", "helm:TestChart"}},
}

// TestDeployDocClaims: every paragraph, list item and table row of docs/deploy.md opens as a
// claim of the registry above, and every test named there exists. A new or reworded claim
// fails here until it names its test (or the doc is corrected).
func TestDeployDocClaims(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, deployDoc))
	if err != nil {
		t.Fatal(err)
	}
	blocks := docBlocks(string(raw))
	used := map[int]bool{}
	for _, b := range blocks {
		i := claimFor(b)
		if i < 0 {
			t.Errorf("%s: no claim in the registry opens %q: add it with its test", deployDoc, b[:min(len(b), 80)])
			continue
		}
		used[i] = true
	}
	for i, c := range deployClaims {
		if !used[i] {
			t.Errorf("claim %q is not in %s any more", c.opens, deployDoc)
		}
		if len(c.tests) == 0 && c.note == "" {
			t.Errorf("claim %q names no test", c.opens)
		}
		for _, ref := range c.tests {
			if !testExists(t, root, ref) {
				t.Errorf("claim %q: %s does not exist", c.opens, ref)
			}
		}
	}
}

// claimFor returns the index of the claim a block opens with, -1 for none.
func claimFor(block string) int {
	for i, c := range deployClaims {
		if strings.HasPrefix(block, c.opens) {
			return i
		}
	}
	return -1
}

// docBlocks splits Markdown into its paragraphs, list items and table rows, each on one line,
// leaving out headings, fenced code, the table of contents and table header rows.
func docBlocks(doc string) []string {
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, " "))
			cur = nil
		}
	}
	lines := strings.Split(doc, "\n")
	inCode := false
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			inCode = !inCode
		case inCode:
		case trimmed == "", strings.HasPrefix(trimmed, "#"), strings.HasPrefix(trimmed, "- ["):
			flush()
		case strings.HasPrefix(trimmed, "|"):
			flush()
			next := ""
			if i+1 < len(lines) {
				next = lines[i+1]
			}
			if !tableRule.MatchString(trimmed) && !tableRule.MatchString(strings.TrimSpace(next)) {
				blocks = append(blocks, trimmed)
			}
		case listItem.MatchString(line):
			flush()
			cur = append(cur, trimmed)
		default:
			cur = append(cur, trimmed)
		}
	}
	flush()
	return blocks
}

var (
	tableRule = regexp.MustCompile(`^\|[-:| ]+\|$`)
	listItem  = regexp.MustCompile(`^(- |[0-9]+\. )`)
)

// testExists reports whether dir:fn names a function of a _test.go file in dir.
func testExists(t *testing.T, root, ref string) bool {
	t.Helper()
	dir, fn, ok := strings.Cut(ref, ":")
	if !ok {
		return false
	}
	files, err := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "\nfunc "+fn+"(") {
			return true
		}
	}
	return false
}

// TestDeployDocExamples: every values example of docs/deploy.md (a yaml block; a block whose
// fence names more than the language, such as a pod spec, is not values) renders, on top of the minimal
// values (each example shows only what it is about), with its placeholders filled in.
func TestDeployDocExamples(t *testing.T) {
	h := newHelm(t)
	raw, err := os.ReadFile(filepath.Join(h.root, deployDoc))
	if err != nil {
		t.Fatal(err)
	}
	examples := yamlBlocks(string(raw))
	if len(examples) < 4 {
		t.Fatalf("%d yaml examples found in %s, want at least 4", len(examples), deployDoc)
	}
	secret := regexp.MustCompile(`"<[^"]*>"`)
	dir := t.TempDir()
	for i, ex := range examples {
		file := filepath.Join(dir, "example-"+strings.Repeat("x", i+1)+".yaml")
		filled := secret.ReplaceAllString(ex, `"ZG9jLWV4YW1wbGUtcGxhY2Vob2xkZXItc2VjcmV0LXZhbHVl"`)
		if err := os.WriteFile(file, []byte(filled), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := h.run(t, "template", releaseName, chartDir, "--namespace", namespace,
			"--values", filepath.Join("helm", "testdata", "minimal.yaml"), "--values", file)
		if err != nil {
			t.Errorf("example %d of %s does not render: %v\n%s", i+1, deployDoc, err, ex)
			continue
		}
		decodeAll(t, out)
	}
}

// TestKeyRotationRendered: docs/deploy.md's first step of a key rotation (the new key added
// openOnly) renders as the gateway's openOnly on that key alone, and the gateway accepts it.
func TestKeyRotationRendered(t *testing.T) {
	h := newHelm(t)
	out, err := h.template(t, []string{"minimal.yaml"}, "mrtr.keys[1].id=k2", "mrtr.keys[1].secret="+otherKey, "mrtr.keys[1].openOnly=true")
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	m := decodeAll(t, out)
	cm := find[*corev1.ConfigMap](t, m, fullname)
	cfg := parseConfig(t, cm)
	if k := cfg.MRTR.Keys; len(k) != 2 || k[0].ID != "k1" || k[0].OpenOnly || k[1].ID != "k2" || !k[1].OpenOnly {
		t.Errorf("mrtr.keys = %+v, want k1 sealing and k2 open-only", k)
	}
	checkWithGateway(t, cm, gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec))
}

// yamlBlocks returns the fenced yaml code blocks of a Markdown document, dedented.
func yamlBlocks(doc string) []string {
	var out []string
	var cur []string
	indent, in := "", false
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```yaml":
			in, indent, cur = true, line[:len(line)-len(strings.TrimLeft(line, " "))], nil
		case in && trimmed == "```":
			in = false
			out = append(out, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, strings.TrimPrefix(line, indent))
		}
	}
	return out
}

// TestDeployDocCommands: the objects docs/deploy.md's kubectl commands name (deployment/NAME,
// svc/NAME) are the ones the chart renders for the release and namespace its helm command
// installs.
func TestDeployDocCommands(t *testing.T) {
	h := newHelm(t)
	doc := string(readFile(t, h, deployDoc))
	install := regexp.MustCompile(`helm upgrade --install (\S+) \./` + chartDir + ` -n (\S+)`).FindStringSubmatch(doc)
	if install == nil {
		t.Fatalf("%s has no `helm upgrade --install NAME ./%s -n NAMESPACE`", deployDoc, chartDir)
	}
	out, err := h.run(t, "template", install[1], chartDir, "--namespace", install[2],
		"--values", filepath.Join("helm", "testdata", "minimal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := decodeAll(t, out)
	refs := regexp.MustCompile("`kubectl ([^`]*\\b(?:deployment|svc)/[^`]*)`").FindAllStringSubmatch(doc, -1)
	if len(refs) == 0 {
		t.Fatalf("%s has no kubectl command naming a deployment/ or svc/", deployDoc)
	}
	for _, r := range refs {
		obj := regexp.MustCompile(`\b(deployment|svc)/(\S+)`).FindStringSubmatch(r[1])
		ns := regexp.MustCompile(`-n (\S+)`).FindStringSubmatch(r[1])
		if ns == nil || ns[1] != install[2] {
			t.Errorf("`kubectl %s`: want -n %s, the namespace the doc installs into", r[1], install[2])
		}
		switch obj[1] {
		case "deployment":
			find[*appsv1.Deployment](t, m, obj[2])
		case "svc":
			find[*corev1.Service](t, m, obj[2])
		}
	}
}
