package helm

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The MRTR key values of the test values files, as written there.
const (
	minimalKey = "bWluaW1hbC10ZXN0LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24tdXNlIQ=="
	// testAdminToken is adminToken in every values file that has the chart create its Secret.
	testAdminToken = "YWRtaW4tdG9rZW4tb2YtdGhlLWNoYXJ0LXRlc3RzLW5vdC1mb3ItdXNl"
	haNewKeyID     = "2026-12"
	haOldKeyID     = "2026-11"
)

func checkMinimal(t *testing.T, m manifests, cfg gatewayConfig) {
	dep := find[*appsv1.Deployment](t, m, fullname)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", dep.Spec.Replicas)
	}
	for kind, n := range map[string]int{
		"HorizontalPodAutoscaler": count[*autoscalingv2.HorizontalPodAutoscaler](m),
		"Ingress":                 count[*networkingv1.Ingress](m),
		"NetworkPolicy":           count[*networkingv1.NetworkPolicy](m),
		"custom resources":        len(m.custom),
		"Deployments":             count[*appsv1.Deployment](m) - 1,
	} {
		if n != 0 {
			t.Errorf("%d unexpected %s", n, kind)
		}
	}
	if a := dep.Spec.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != "9090" || a["prometheus.io/path"] != "/metrics" {
		t.Errorf("prometheus.io scrape annotations missing: %v", a)
	}
	if cfg.Redis.URL != "" || cfg.Redis.Password != nil {
		t.Errorf("redis = %+v, want the in-memory store", cfg.Redis)
	}
	if cfg.Admin.Explain.Enabled || cfg.Admin.Explain.Secret != nil {
		t.Errorf("admin.explain = %+v, want the policy explainer off by default", cfg.Admin.Explain)
	}
	if len(cfg.MRTR.Keys) != 1 || cfg.MRTR.Keys[0].ID != "k1" || cfg.MRTR.Keys[0].Secret.File != secretsDir+"/mrtr-k1" {
		t.Errorf("mrtr keys = %+v", cfg.MRTR.Keys)
	}
	if time.Duration(cfg.MRTR.TTL) != 10*time.Minute {
		t.Errorf("mrtr ttl = %v, want the default 10m", time.Duration(cfg.MRTR.TTL))
	}
	if got := string(find[*corev1.Secret](t, m, fullname).Data["mrtr-k1"]); got != minimalKey {
		t.Errorf("Secret mrtr-k1 = %q, want the key from the values", got)
	}
	if got := string(find[*corev1.Secret](t, m, fullname).Data["admin-token"]); got != testAdminToken {
		t.Errorf("Secret admin-token = %q, want adminToken from the values", got)
	}
	pdb := find[*policyv1.PodDisruptionBudget](t, m, fullname)
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PDB = %+v, want maxUnavailable 1 (a single replica can still be evicted)", pdb.Spec)
	}
	if sa := find[*corev1.ServiceAccount](t, m, fullname); !isFalse(sa.AutomountServiceAccountToken) {
		t.Error("ServiceAccount must not automount its token")
	}
}

func checkSingle(t *testing.T, m manifests, cfg gatewayConfig) {
	if cfg.Server.PublicURL != "https://mcp.example.com/mcp" || len(cfg.Auth.Issuers) != 1 {
		t.Errorf("server/auth not carried over: %+v %+v", cfg.Server, cfg.Auth.Issuers)
	}
	rules := cfg.Auth.Policy.Rules
	if len(rules) != 2 || rules[0].ID != "read" || rules[1].Confirm != true {
		t.Errorf("policy rules = %+v", rules)
	}
	if len(cfg.Upstreams) != 2 || cfg.Upstreams[0].Headers["Authorization"].File != secretsDir+"/github-token" {
		t.Errorf("upstreams = %+v", cfg.Upstreams)
	}
	if time.Duration(cfg.Upstreams[0].Timeout) != 30*time.Second {
		t.Errorf("upstream timeout = %v", time.Duration(cfg.Upstreams[0].Timeout))
	}
	if _, ok := find[*corev1.Secret](t, m, fullname).Data["github-token"]; !ok {
		t.Error("Secret lacks github-token from secrets.files")
	}
	// The explainer on the pod's admin port, behind a bearer secret from secrets.files.
	if e := cfg.Admin.Explain; !e.Enabled || e.Secret == nil || e.Secret.File != secretsDir+"/explain" {
		t.Errorf("admin.explain = %+v, want enabled with the secret file %s/explain", e, secretsDir)
	}
	if _, ok := find[*corev1.Secret](t, m, fullname).Data["explain"]; !ok {
		t.Error("Secret lacks the explain secret from secrets.files")
	}
}

func checkHA(t *testing.T, m manifests, cfg gatewayConfig) {
	dep := find[*appsv1.Deployment](t, m, fullname)
	hpa := find[*autoscalingv2.HorizontalPodAutoscaler](t, m, fullname)
	if *hpa.Spec.MinReplicas != 3 || hpa.Spec.MaxReplicas != 12 || len(hpa.Spec.Metrics) != 2 || hpa.Spec.Behavior == nil {
		t.Errorf("HPA spec = %+v", hpa.Spec)
	}
	if pdb := find[*policyv1.PodDisruptionBudget](t, m, fullname); pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 2 || pdb.Spec.MaxUnavailable != nil {
		t.Errorf("PDB = %+v, want minAvailable 2 only", pdb.Spec)
	}
	if _, ok := dep.Spec.Template.Annotations["prometheus.io/scrape"]; ok {
		t.Error("scrape annotations with a ServiceMonitor would scrape every pod twice")
	}
	if cfg.Admin.RedisReadiness != "advisory" || cfg.Admin.Listen != ":9090" {
		t.Errorf("admin = %+v, want redisReadiness from the values beside the chart's listen", cfg.Admin)
	}
	if ids := keyIDs(cfg); !slices.Equal(ids, []string{haOldKeyID, haNewKeyID}) || time.Duration(cfg.MRTR.TTL) != 5*time.Minute {
		t.Errorf("mrtr = %v ttl %v, want both keys, oldest first, and 5m", ids, time.Duration(cfg.MRTR.TTL))
	}
	if cfg.Redis.URL != "rediss://redis-master.data.svc:6380/0" || cfg.Redis.Password == nil || cfg.Redis.Password.File != secretsDir+"/redis-password" {
		t.Errorf("redis = %+v", cfg.Redis)
	}
	src := volume(t, dep.Spec.Template.Spec, "secrets").Projected.Sources
	if len(src) != 2 || src[1].Secret == nil || src[1].Secret.Name != "redis-auth" ||
		len(src[1].Secret.Items) != 1 || src[1].Secret.Items[0] != (corev1.KeyToPath{Key: "password", Path: "redis-password"}) {
		t.Errorf("projected sources = %+v, want the chart Secret and redis-auth/password as redis-password", src)
	}
	if g := *dep.Spec.Template.Spec.TerminationGracePeriodSeconds; g != 90 {
		t.Errorf("terminationGracePeriodSeconds = %d, want 10+15+60+5", g)
	}
	checkPrometheusRule(t, m)
	checkDashboard(t, m)
	if sms := m.customByKind("ServiceMonitor"); len(sms) != 1 || sms[0].GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("want one ServiceMonitor with the label from metrics.serviceMonitor.labels, got %d", len(sms))
	}
	np := find[*networkingv1.NetworkPolicy](t, m, fullname)
	if len(np.Spec.Ingress) != 2 || len(np.Spec.Ingress[0].From) != 1 || len(np.Spec.Ingress[1].From) != 2 {
		t.Errorf("NetworkPolicy ingress = %+v, want mcp from ingress-nginx, admin from monitoring and the test Pod", np.Spec.Ingress)
	}
}

func checkPrometheusRule(t *testing.T, m manifests) {
	t.Helper()
	rules := m.customByKind("PrometheusRule")
	if len(rules) != 1 || rules[0].GetLabels()["release"] != "kube-prometheus-stack" {
		t.Fatalf("want one PrometheusRule with the extra label, got %d", len(rules))
	}
	groups, _, _ := unstructured.NestedSlice(rules[0].Object, "spec", "groups")
	if len(groups) == 0 {
		t.Fatal("PrometheusRule has no groups")
	}
	for _, g := range groups {
		group, _ := g.(map[string]any)
		rs, _ := group["rules"].([]any)
		if group["name"] == "" || len(rs) == 0 {
			t.Errorf("rule group %v has no name or no rules", group["name"])
		}
		for _, r := range rs {
			if rule, _ := r.(map[string]any); rule["expr"] == nil {
				t.Errorf("rule without expr in group %v", group["name"])
			}
		}
	}
}

func checkDashboard(t *testing.T, m manifests) {
	t.Helper()
	cm := find[*corev1.ConfigMap](t, m, fullname+"-dashboard")
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "MCP" {
		t.Errorf("dashboard labels %v annotations %v", cm.Labels, cm.Annotations)
	}
	var dash struct {
		Title  string            `json:"title"`
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal([]byte(cm.Data["mcp-gateway.json"]), &dash); err != nil || dash.Title == "" || len(dash.Panels) == 0 {
		t.Errorf("dashboard JSON: %v (title %q, %d panels)", err, dash.Title, len(dash.Panels))
	}
}

func checkIngressTLS(t *testing.T, m manifests, cfg gatewayConfig) {
	ing := find[*networkingv1.Ingress](t, m, fullname)
	want := map[string]string{
		"nginx.ingress.kubernetes.io/proxy-buffering":    "off",
		"nginx.ingress.kubernetes.io/proxy-read-timeout": "3600",
		"nginx.ingress.kubernetes.io/proxy-send-timeout": "3600",
		// 10 MiB maxBodyBytes, rounded up, plus one.
		"nginx.ingress.kubernetes.io/proxy-body-size": "11m",
		"cert-manager.io/cluster-issuer":              "letsencrypt",
	}
	for k, v := range want {
		if ing.Annotations[k] != v {
			t.Errorf("Ingress annotation %s = %q, want %q", k, ing.Annotations[k], v)
		}
	}
	for _, k := range []string{"nginx.ingress.kubernetes.io/affinity", "nginx.ingress.kubernetes.io/backend-protocol"} {
		if _, ok := ing.Annotations[k]; ok {
			t.Errorf("unexpected Ingress annotation %s", k)
		}
	}
	if len(ing.Spec.TLS) != 1 || ing.Spec.TLS[0].SecretName != "mcp-example-com-tls" || !slices.Equal(ing.Spec.TLS[0].Hosts, []string{"mcp.example.com"}) {
		t.Errorf("Ingress TLS = %+v", ing.Spec.TLS)
	}
	path := ing.Spec.Rules[0].HTTP.Paths[0]
	if path.Path != "/" || path.Backend.Service.Name != fullname || path.Backend.Service.Port.Name != "mcp" {
		t.Errorf("Ingress path = %+v, want / to the mcp port (/.well-known too)", path)
	}
	if cfg.Server.PublicURL != "https://mcp.example.com/mcp" {
		t.Errorf("publicURL = %q, want it derived from the Ingress host", cfg.Server.PublicURL)
	}
	if cfg.Server.TLS != nil {
		t.Error("TLS at the Ingress: the gateway must not terminate TLS")
	}
}

func checkGatewayTLS(t *testing.T, m manifests, cfg gatewayConfig) {
	spec := find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec
	if v := volume(t, spec, "tls"); v.Secret == nil || v.Secret.SecretName != "mcp-gateway-tls" {
		t.Errorf("tls volume = %+v", v)
	}
	// docs/deploy.md: mounted whole (not as a subPath) at /etc/mcp-gateway/tls, so a renewed
	// certificate reaches the running pods.
	var tlsMounts []corev1.VolumeMount
	for _, vm := range gatewayContainer(t, spec).VolumeMounts {
		if vm.Name == "tls" {
			tlsMounts = append(tlsMounts, vm)
		}
	}
	if len(tlsMounts) != 1 || tlsMounts[0].MountPath != "/etc/mcp-gateway/tls" || tlsMounts[0].SubPath != "" {
		t.Errorf("tls mounts = %+v, want one of the whole volume at /etc/mcp-gateway/tls", tlsMounts)
	}
	if cfg.Server.TLS == nil || cfg.Server.TLS.CertFile != "/etc/mcp-gateway/tls/tls.crt" || cfg.Server.TLS.KeyFile != "/etc/mcp-gateway/tls/tls.key" {
		t.Errorf("server.tls = %+v", cfg.Server.TLS)
	}
	// The admin port stays plain HTTP for the kubelet probes and Prometheus.
	if p := gatewayContainer(t, spec).ReadinessProbe.HTTPGet; p.Scheme != "" && p.Scheme != corev1.URISchemeHTTP {
		t.Errorf("readiness probe scheme %s, want HTTP on the admin port", p.Scheme)
	}
	if p := find[*corev1.Service](t, m, fullname).Spec.Ports[0]; p.AppProtocol == nil || *p.AppProtocol != "https" {
		t.Error("mcp Service port must declare appProtocol https")
	}
	if a := find[*networkingv1.Ingress](t, m, fullname).Annotations; a["nginx.ingress.kubernetes.io/backend-protocol"] != "HTTPS" {
		t.Error("Ingress must talk HTTPS to a TLS-terminating gateway")
	}
	if args := gatewayContainer(t, spec).Args; !slices.Equal(args[3:], []string{"--force", "--log-level", "warn"}) {
		t.Errorf("args = %q, want extraArgs appended", args)
	}
	if env := gatewayContainer(t, spec).Env; !slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == "MCPGW_LOG_FORMAT" && e.Value == "text" }) {
		t.Errorf("env = %+v, want extraEnv's MCPGW_LOG_FORMAT", env)
	}
	if n := count[*corev1.Secret](m); n != 0 {
		t.Errorf("%d Secrets rendered with secrets.existingSecret", n)
	}
	if src := volume(t, spec, "secrets").Projected.Sources; len(src) != 1 || src[0].Secret.Name != "mcp-gateway-keys" {
		t.Errorf("projected sources = %+v, want only the existing Secret", src)
	}
	if cfg.Redis.URL != "redis://"+fullname+"-redis:6379/0" || cfg.Redis.Password == nil || cfg.Redis.Password.File != secretsDir+"/redis-password" {
		t.Errorf("redis = %+v", cfg.Redis)
	}
	checkInternalRedis(t, m)
}

func checkInternalRedis(t *testing.T, m manifests) {
	t.Helper()
	redis := find[*appsv1.Deployment](t, m, fullname+"-redis")
	c := redis.Spec.Template.Spec.Containers[0]
	if len(c.Env) != 1 || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef == nil ||
		c.Env[0].ValueFrom.SecretKeyRef.Name != "mcp-gateway-keys" || c.Env[0].ValueFrom.SecretKeyRef.Key != "redis-password" {
		t.Errorf("redis env = %+v, want the password from mcp-gateway-keys/redis-password", c.Env)
	}
	if !slices.Contains(c.Args, "--requirepass") {
		t.Errorf("redis args = %v, want --requirepass", c.Args)
	}
	// A development Redis: one pod, nothing persisted.
	if i := slices.Index(c.Args, "--save"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != "" ||
		!slices.Contains(c.Args, "--appendonly") || redis.Spec.Replicas == nil || *redis.Spec.Replicas != 1 {
		t.Errorf("redis args = %q, replicas %v, want one pod with --save \"\" and --appendonly no", c.Args, redis.Spec.Replicas)
	}
	if !isTrue(redis.Spec.Template.Spec.SecurityContext.RunAsNonRoot) || !isTrue(c.SecurityContext.ReadOnlyRootFilesystem) {
		t.Error("in-chart Redis must run non-root with a read-only root filesystem")
	}
	svc := find[*corev1.Service](t, m, fullname+"-redis")
	if !selectorMatches(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, redis.Spec.Template.Labels) {
		t.Error("redis Service does not select the redis pod")
	}
	gw := find[*appsv1.Deployment](t, m, fullname).Spec.Template.Labels
	if selectorMatches(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, gw) {
		t.Error("redis Service also selects the gateway pods")
	}
	np := find[*networkingv1.NetworkPolicy](t, m, fullname+"-redis")
	if !selectorMatches(t, &np.Spec.PodSelector, redis.Spec.Template.Labels) ||
		len(np.Spec.Ingress) != 1 || !selectorMatches(t, np.Spec.Ingress[0].From[0].PodSelector, gw) {
		t.Error("redis NetworkPolicy must admit the gateway pods to the redis pod")
	}
}

func keyIDs(cfg gatewayConfig) []string {
	var ids []string
	for _, k := range cfg.MRTR.Keys {
		ids = append(ids, k.ID)
	}
	return ids
}

func isFalse(b *bool) bool { return b != nil && !*b }

// checkPins: the lock file from the values is in the ConfigMap, mounted read-only at the path
// config.pins.lockFile names, and the rest of config.pins is carried over.
func checkPins(t *testing.T, m manifests, cfg gatewayConfig) {
	const lockPath = "/etc/mcp-gateway/pins.yaml"
	if cfg.Pins == nil || cfg.Pins.LockFile != lockPath || cfg.Pins.Actions["new"] != "log" ||
		cfg.Pins.Backends["notes"].Mode != "tofu" || cfg.Pins.Backends["notes"].Actions["text-changed"] != "block" {
		t.Errorf("config.pins = %+v", cfg.Pins)
	}
	cm := find[*corev1.ConfigMap](t, m, fullname)
	if !strings.Contains(cm.Data["pins.yaml"], "'github':") {
		t.Errorf("ConfigMap pins.yaml = %q", cm.Data["pins.yaml"])
	}
	c := gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec)
	found := false
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == lockPath {
			found = vm.Name == "config" && vm.SubPath == "pins.yaml" && vm.ReadOnly
		}
	}
	if !found {
		t.Errorf("no read-only mount of the lock file at %s: %+v", lockPath, c.VolumeMounts)
	}
}
