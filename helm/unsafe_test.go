package helm

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// A second MRTR key of the required length for --set.
const otherKey = "b3RoZXItdGVzdC1rZXktbm90LWZvci1wcm9kdWN0aW9uLXVzZSEhIQ=="

// testChecksum: the pod template's checksums change exactly when the config or the secret
// does, so `helm upgrade` rolls the pods then and only then.
func testChecksum(t *testing.T, h helmCLI) {
	base := checksums(t, h)
	cases := []struct {
		name                     string
		set                      string
		configDiffers, secDiffer bool
	}{
		{"config change", "config.log.level=debug", true, false},
		{"key change", "mrtr.keys[0].secret=" + otherKey, false, true},
		{"unrelated change", "resources.requests.cpu=200m", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := checksums(t, h, tc.set)
			if (got[0] != base[0]) != tc.configDiffers {
				t.Errorf("checksum/config changed = %v, want %v", got[0] != base[0], tc.configDiffers)
			}
			if (got[1] != base[1]) != tc.secDiffer {
				t.Errorf("checksum/secret changed = %v, want %v", got[1] != base[1], tc.secDiffer)
			}
		})
	}
}

func checksums(t *testing.T, h helmCLI, sets ...string) [2]string {
	t.Helper()
	out, err := h.template(t, []string{"minimal.yaml"}, sets...)
	if err != nil {
		t.Fatal(err)
	}
	a := find[*appsv1.Deployment](t, decodeAll(t, out), fullname).Spec.Template.Annotations
	return [2]string{a["checksum/config"], a["checksum/secret"]}
}

// testUnsafe: values that would deploy a broken or unsafe gateway fail to render, and say why.
func testUnsafe(t *testing.T, h helmCLI) {
	minimal := []string{"minimal.yaml"}
	cases := []struct {
		name  string
		files []string
		sets  []string
		want  string
	}{
		{"replicas without redis", minimal, []string{"replicaCount=3"}, "replicaCount > 1 or autoscaling.enabled needs shared state"},
		{"config removed", minimal, []string{"config=null"}, "config is not set (config: null"},
		{"no backend", minimal, []string{"config.upstreams=null"}, "config.upstreams must list at least one backend"},
		{"no issuer", minimal, []string{"config.auth.issuers=null"}, "config.auth.issuers must name at least one token issuer"},
		{"no public URL", minimal, []string{"config.server.publicURL="}, "the gateway needs its public URL"},
		{"public URL with a password", minimal, []string{"config.server.publicURL=https://ops:pw@mcp.example.com/mcp"}, "/config/server/publicURL"},
		{"autoscaling without redis", minimal, []string{"autoscaling.enabled=true"}, "replicaCount > 1 or autoscaling.enabled needs shared state"},
		{"no mrtr key", nil, nil, "no MRTR key"},
		// docs/deploy.md: the chart's defaults alone are refused for all five values without one.
		{"defaults: admin token", nil, nil, "no admin token: set adminToken"},
		{"defaults: backend", nil, nil, "config.upstreams must list at least one backend"},
		{"defaults: issuer", nil, nil, "config.auth.issuers must name at least one token issuer"},
		{"defaults: public URL", nil, nil, "the gateway needs its public URL"},
		{"key id without value", nil, []string{"mrtr.keys[0].id=k1"}, "no MRTR key"},
		{"second key without value", minimal, []string{"mrtr.keys[1].id=k2"}, "every entry of mrtr.keys needs a secret"},
		{"every key open-only", minimal, []string{"mrtr.keys[0].openOnly=true"}, "every entry of mrtr.keys is openOnly: one must seal"},
		{"short key", nil, []string{"mrtr.keys[0].id=k1", "mrtr.keys[0].secret=short"}, "shorter than 32 characters"},
		{"existing secret plus values", minimal, []string{"secrets.existingSecret=keys"}, "with secrets.existingSecret the chart creates no Secret"},
		{"existing secret without ids", nil, []string{"secrets.existingSecret=keys"}, "needs the MRTR key ids in mrtr.keys"},
		{"grace too short", minimal, []string{"terminationGracePeriodSeconds=30"}, "terminationGracePeriodSeconds must be larger than"},
		{"two redis passwords", minimal, []string{"redis.url=redis://r:6379", "redis.password=p", "redis.existingSecret=r"}, "either redis.password or redis.existingSecret"},
		{"autoscaling min above max", minimal, []string{"redis.url=redis://r:6379", "autoscaling.enabled=true", "autoscaling.minReplicas=5", "autoscaling.maxReplicas=3"}, "minReplicas is larger than autoscaling.maxReplicas"},
		{"two redis", minimal, []string{"redis.url=redis://r:6379", "redis.internal.enabled=true"}, "either redis.url or redis.internal.enabled"},
		{"managed listen", minimal, []string{"config.server.listen=:80"}, "config.server.listen is set by the chart"},
		// The managed listeners and config file set another way: through a flag (the gateway's
		// flags take one or two dashes, the value after '=' or as the next argument) or an
		// MCPGW_* variable, either of which overrides config.yaml. An MCP listener off the
		// container port leaves pods ready (the probes use the admin port) with nothing behind
		// the Service.
		{"listen flag", minimal, []string{"extraArgs={--listen,:8443}"}, "extraArgs --listen is set by the chart: use containerPorts.mcp"},
		{"listen flag, one dash and =", minimal, []string{"extraArgs={-listen=:8443}"}, "extraArgs -listen is set by the chart"},
		{"admin listen flag", minimal, []string{"extraArgs={--admin-listen=:9999}"}, "extraArgs --admin-listen is set by the chart: use containerPorts.admin"},
		{"config flag", minimal, []string{"extraArgs={--config,/etc/other.yaml}"}, "extraArgs --config is set by the chart"},
		{"listen variable", minimal, []string{"extraEnv[0].name=MCPGW_LISTEN", "extraEnv[0].value=:8443"}, "extraEnv MCPGW_LISTEN is set by the chart: use containerPorts.mcp"},
		{"admin listen variable", minimal, []string{"extraEnv[0].name=MCPGW_ADMIN_LISTEN", "extraEnv[0].value=:9999"}, "extraEnv MCPGW_ADMIN_LISTEN is set by the chart"},
		{"config variable", minimal, []string{"extraEnv[0].name=MCPGW_CONFIG", "extraEnv[0].value=/x.yaml"}, "extraEnv MCPGW_CONFIG is set by the chart"},
		{"managed redis", minimal, []string{"config.redis.url=redis://r:6379"}, "config.redis.url is set by the chart"},
		{"auth disabled unforced", minimal, []string{"config.auth.disabled=true"}, "unless extraArgs contains"},
		{"no admin token", minimal, []string{"adminToken="}, "no admin token: set adminToken"},
		{"short admin token", minimal, []string{"adminToken=short"}, "adminToken is shorter than 32 characters"},
		{"existing secret plus admin token", nil, []string{"secrets.existingSecret=keys", "mrtr.keys[0].id=k1", "adminToken=" + otherKey}, "put adminToken into that Secret"},
		{"managed admin token", minimal, []string{"config.admin.token.file=/x"}, "config.admin.token is set by the chart"},
		{"pprof on the pod's port", minimal, []string{"config.admin.pprof=true"}, "loopback-only admin listener only"},
		{"explainer secret inline", minimal, []string{"config.admin.explain.enabled=true", "config.admin.explain.secret.value=x"}, "value"},
		{"one container port for both listeners", minimal, []string{"containerPorts.admin=8080"}, "containerPorts.mcp and containerPorts.admin are both 8080"},
		{"tls without secret", minimal, []string{"tls.enabled=true"}, "tls.enabled needs tls.secretName"},
		{"hpa without metrics", minimal, []string{"redis.url=redis://r:6379", "autoscaling.enabled=true", "autoscaling.targetCPUUtilizationPercentage=null"}, "needs targetCPUUtilizationPercentage"},
		{"lock file without a pinned backend", []string{"pins.yaml"}, []string{"config.pins.backends.notes.mode=lockfile"},
			`pins.lockFile has no section for backend "notes"`},
		{"lock file not YAML", []string{"pins.yaml"}, []string{"pins.lockFile=[unclosed"}, "pins.lockFile is not the YAML"},
		// A PodDisruptionBudget that lets no replica go: kubectl drain and node upgrades wait for
		// ever. The floor is replicaCount, or autoscaling.minReplicas with the HPA.
		{"pdb keeps the only replica", minimal, []string{"podDisruptionBudget.minAvailable=1"}, "podDisruptionBudget lets no pod"},
		{"pdb keeps every replica", minimal, []string{"redis.url=redis://r:6379", "replicaCount=3", "podDisruptionBudget.minAvailable=3"}, "podDisruptionBudget lets no pod"},
		{"pdb keeps more than there are", minimal, []string{"redis.url=redis://r:6379", "replicaCount=2", "podDisruptionBudget.minAvailable=5"}, "podDisruptionBudget lets no pod"},
		{"pdb keeps the autoscaling floor", minimal, []string{"redis.url=redis://r:6379", "autoscaling.enabled=true", "autoscaling.minReplicas=2", "podDisruptionBudget.minAvailable=2"}, "podDisruptionBudget lets no pod"},
		{"pdb keeps 100%", minimal, []string{"redis.url=redis://r:6379", "replicaCount=4", "podDisruptionBudget.minAvailable=100%"}, "podDisruptionBudget lets no pod"},
		{"pdb keeps a share rounded up to all", minimal, []string{"redis.url=redis://r:6379", "replicaCount=2", "podDisruptionBudget.minAvailable=60%"}, "podDisruptionBudget lets no pod"},
		{"pdb lets none go", minimal, []string{"podDisruptionBudget.maxUnavailable=0"}, "podDisruptionBudget lets no pod"},
		{"pdb lets 0% go", minimal, []string{"podDisruptionBudget.maxUnavailable=0%"}, "podDisruptionBudget lets no pod"},
		{"pdb count as a string", minimal, []string{"podDisruptionBudget.maxUnavailable=one"}, "podDisruptionBudget.maxUnavailable"},
		{"pdb share over 100%", minimal, []string{"podDisruptionBudget.maxUnavailable=150%"}, "podDisruptionBudget.maxUnavailable \"150%\": a percentage is at most 100%"},
		{"pdb minimum as a string", minimal, []string{"redis.url=redis://r:6379", "replicaCount=3", "podDisruptionBudget.minAvailable=2 pods"}, "podDisruptionBudget.minAvailable"},
		// Kubernetes refuses a liveness or startup probe whose successThreshold is not 1.
		{"liveness success threshold", minimal, []string{"probes.liveness.successThreshold=2"}, "/probes/liveness/successThreshold"},
		{"startup success threshold", minimal, []string{"probes.startup.successThreshold=3"}, "/probes/startup/successThreshold"},
		// A file of the chart's Secret named as an entry the chart writes itself: the Secret
		// would hold the name twice, one value overriding the other (the admin token or a key
		// past the length check) or the install failing.
		{"file named admin-token", minimal, []string{"secrets.files.admin-token=short"}, "secrets.files.admin-token: the chart writes that entry itself"},
		{"file named as a key", minimal, []string{"secrets.files.mrtr-k1=short"}, "secrets.files.mrtr-k1: the chart writes that entry itself"},
		{"file named as a future key", minimal, []string{"secrets.files.mrtr-k9=x"}, "secrets.files.mrtr-k9: the chart writes that entry itself"},
		{"file named redis-password", minimal, []string{"redis.url=redis://r:6379", "redis.password=p", "secrets.files.redis-password=q"}, "secrets.files.redis-password: the chart writes that entry itself"},
		// A pod label that replaces a selector label leaves the Deployment selecting no pod of
		// its own template, which the API server refuses (and a Service nothing).
		{"pod label over the component", minimal, []string{"podLabels.app\\.kubernetes\\.io/component=api"}, "podLabels.app.kubernetes.io/component: the chart selects its pods by that label"},
		{"pod label over the instance", minimal, []string{"podLabels.app\\.kubernetes\\.io/instance=x"}, "podLabels.app.kubernetes.io/instance: the chart selects its pods by that label"},
		// A request above its limit, which the API server refuses: the memory request raised
		// without the chart's default limit, a CPU request over a CPU limit, the in-chart Redis's.
		{"memory request over the default limit", minimal, []string{"resources.requests.memory=512Mi"}, "resources.requests.memory 512Mi is more than resources.limits.memory 256Mi"},
		{"memory request over the limit, other units", minimal, []string{"resources.requests.memory=1G", "resources.limits.memory=900Mi"}, "resources.requests.memory 1G is more than resources.limits.memory 900Mi"},
		{"cpu request over the limit", minimal, []string{"resources.requests.cpu=1.5", "resources.limits.cpu=1"}, "resources.requests.cpu 1.5 is more than resources.limits.cpu 1"},
		{"cpu request over the limit in millicores", minimal, []string{"resources.requests.cpu=1", "resources.limits.cpu=500m"}, "resources.requests.cpu 1 is more than resources.limits.cpu 500m"},
		{"redis memory request over its limit", minimal, []string{"redis.internal.enabled=true", "redis.internal.resources.requests.memory=1Gi"}, "redis.internal.resources.requests.memory 1Gi is more than redis.internal.resources.limits.memory 128Mi"},
		{"typo at the top", minimal, []string{"replicaCont=2"}, "replicaCont"},
		{"typo in config", minimal, []string{"config.sever.path=/x"}, "sever"},
		{"typo in a section", minimal, []string{"ingress.hots[0].host=x"}, "hots"},
		{"unknown word in a list entry", minimal, []string{"config.guardrails.rules[0].tools[0]=*", "config.guardrails.rules[0].validate.arguments=blok"},
			"/config/guardrails/rules/0/validate/arguments"},
		{"unknown word in an interceptor", minimal, []string{"config.interceptors[0].name=dlp", "config.interceptors[0].url=http://dlp/mcp",
			"config.interceptors[0].type=validaton", "config.interceptors[0].rules[0].tools[0]=*"}, "/config/interceptors/0/type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := h.template(t, tc.files, tc.sets...)
			if err == nil {
				t.Fatalf("rendering succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
