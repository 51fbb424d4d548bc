package helm

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

const (
	// fullname is the chart's resource name for release "rel".
	fullname = releaseName + "-mcp-gateway"
	// secretsDir and configPath are where the gateway expects its files.
	secretsDir = "/etc/mcp-gateway/secrets"
	configPath = "/etc/mcp-gateway/config.yaml"
)

// TestChart lints and renders the chart over every values file in testdata/ and checks what a
// broken chart would get wrong in a cluster.
func TestChart(t *testing.T) {
	h := newHelm(t)
	t.Run("lint", func(t *testing.T) { testLint(t, h) })
	t.Run("render", func(t *testing.T) { testRender(t, h) })
	t.Run("checksum", func(t *testing.T) { testChecksum(t, h) })
	t.Run("unsafe", func(t *testing.T) { testUnsafe(t, h) })
}

func testLint(t *testing.T, h helmCLI) {
	files, err := filepath.Glob(filepath.Join(h.root, "helm", "testdata", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("want at least 4 values files in helm/testdata, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			if out, err := h.lint(t, filepath.Base(f)); err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
		})
	}
}

// renderCase is one values file and the checks specific to it; checkCommon runs for all.
type renderCase struct {
	values string
	check  func(t *testing.T, m manifests, cfg gatewayConfig)
}

func testRender(t *testing.T, h helmCLI) {
	cases := []renderCase{
		{"minimal.yaml", checkMinimal},
		{"single.yaml", checkSingle},
		{"ha.yaml", checkHA},
		{"ingress-tls.yaml", checkIngressTLS},
		{"gateway-tls.yaml", checkGatewayTLS},
		{"approval.yaml", checkApproval},
		{"pins.yaml", checkPins},
		{"useroauth.yaml", checkUserOAuth},
	}
	for _, tc := range cases {
		t.Run(tc.values, func(t *testing.T) {
			t.Parallel()
			out, err := h.template(t, []string{tc.values})
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			m := decodeAll(t, out)
			cm := find[*corev1.ConfigMap](t, m, fullname)
			cfg := parseConfig(t, cm)
			checkCommon(t, m, cfg)
			checkWithGateway(t, cm, gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec))
			tc.check(t, m, cfg)
		})
	}
}

// checkCommon holds what every rendering must get right.
func checkCommon(t *testing.T, m manifests, cfg gatewayConfig) {
	t.Helper()
	dep := find[*appsv1.Deployment](t, m, fullname)
	pod := dep.Spec.Template
	checkSecurity(t, pod.Spec)
	c := gatewayContainer(t, pod.Spec)
	checkProbes(t, c)
	checkDrain(t, pod.Spec, c, cfg)
	checkMounts(t, m, pod.Spec, c, cfg)
	checkSelectors(t, m, dep)
	checkTestPod(t, m)
	sha256Hex := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, key := range []string{"checksum/config", "checksum/secret"} {
		if !sha256Hex.MatchString(pod.Annotations[key]) {
			t.Errorf("pod annotation %s = %q, want a sha256", key, pod.Annotations[key])
		}
	}
	if want := []string{"serve", "--config", configPath}; !slices.Equal(c.Args[:min(3, len(c.Args))], want) {
		t.Errorf("args = %q, want %q", c.Args, want)
	}
	// ":<port>", every pod interface: the gateway's own admin default is loopback-only, which
	// kubelet probes and Prometheus, connecting from outside the pod, could not reach.
	if cfg.Server.Listen != ":"+portString(t, c, "mcp") || cfg.Admin.Listen != ":"+portString(t, c, "admin") {
		t.Errorf("listen %q / admin %q do not match the container ports", cfg.Server.Listen, cfg.Admin.Listen)
	}
	// The admin port listens on every pod interface, so the gateway requires the admin token,
	// read from the secrets directory (checkMounts checks that a Secret provides it).
	if cfg.Admin.Token == nil || cfg.Admin.Token.File != secretsDir+"/admin-token" || cfg.Admin.Pprof {
		t.Errorf("admin = %+v, want the token from %s/admin-token and no pprof", cfg.Admin, secretsDir)
	}
	// Rollouts bring a new pod up before draining an old one, and replicas spread over nodes
	// and zones.
	if ru := dep.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update %+v, want maxUnavailable 0", dep.Spec.Strategy)
	}
	var spread []string
	for _, c := range pod.Spec.TopologySpreadConstraints {
		spread = append(spread, c.TopologyKey)
	}
	if !slices.Contains(spread, "kubernetes.io/hostname") || !slices.Contains(spread, "topology.kubernetes.io/zone") {
		t.Errorf("topology spread over %v, want nodes and zones", spread)
	}
	if pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks {
		t.Error("enableServiceLinks must be false: service links inject environment variables")
	}
	for _, o := range m.typed {
		if ns := o.(metav1.Object).GetNamespace(); ns != namespace {
			t.Errorf("%T %s in namespace %q, want %q", o, o.(metav1.Object).GetName(), ns, namespace)
		}
	}
}

func gatewayContainer(t *testing.T, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(spec.Containers) != 1 || spec.Containers[0].Name != "gateway" {
		t.Fatalf("want one container named gateway, got %d", len(spec.Containers))
	}
	return spec.Containers[0]
}

func portString(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return strconv.Itoa(int(p.ContainerPort))
		}
	}
	t.Fatalf("container has no port %q", name)
	return ""
}

func checkSecurity(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	psc := spec.SecurityContext
	// docs/deploy.md: the pods run as user 65532, the image's distroless nonroot user.
	if psc == nil || !isTrue(psc.RunAsNonRoot) || psc.RunAsUser == nil || *psc.RunAsUser != 65532 {
		t.Errorf("pod must run as user 65532 (non-root): %+v", psc)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("pod seccompProfile must be RuntimeDefault")
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the service account token must not be mounted")
	}
	sc := spec.Containers[0].SecurityContext
	switch {
	case sc == nil:
		t.Fatal("container has no securityContext")
	case !isTrue(sc.RunAsNonRoot):
		t.Error("container runAsNonRoot must be true")
	case !isTrue(sc.ReadOnlyRootFilesystem):
		t.Error("container readOnlyRootFilesystem must be true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("container allowPrivilegeEscalation must be false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Error("container must drop ALL capabilities and add none")
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("container seccompProfile must be RuntimeDefault")
	}
}

// checkProbes: all three probes go to the admin listener, never the MCP port, which is
// authenticated and would make a probe depend on the token issuer.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{
		{"startup", c.StartupProbe, "/healthz"},
		{"liveness", c.LivenessProbe, "/healthz"},
		{"readiness", c.ReadinessProbe, "/readyz"},
	}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet probe", p.name)
			continue
		}
		if g := p.probe.HTTPGet; g.Path != p.path || g.Port.String() != "admin" {
			t.Errorf("%s probe: got %s on port %s, want %s on admin", p.name, g.Path, g.Port.String(), p.path)
		}
	}
}

// checkDrain: Kubernetes sends SIGKILL terminationGracePeriodSeconds after it starts the
// preStop hook, so the grace period must cover preStop, the gateway's drain delay and its
// shutdown deadline, read here from the rendered config.
func checkDrain(t *testing.T, spec corev1.PodSpec, c corev1.Container, cfg gatewayConfig) {
	t.Helper()
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatal("want a lifecycle.preStop.sleep action (the image has no shell)")
	}
	if c.Lifecycle.PreStop.Exec != nil || c.Lifecycle.PreStop.HTTPGet != nil {
		t.Error("preStop must only sleep")
	}
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	if preStop <= 0 || cfg.Server.DrainDelay <= 0 || cfg.Server.ShutdownTimeout <= 0 {
		t.Errorf("preStop %v, drainDelay %v, shutdownTimeout %v: all must be positive",
			preStop, time.Duration(cfg.Server.DrainDelay), time.Duration(cfg.Server.ShutdownTimeout))
	}
	if spec.TerminationGracePeriodSeconds == nil {
		t.Fatal("terminationGracePeriodSeconds is not set")
	}
	grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
	need := preStop + time.Duration(cfg.Server.DrainDelay) + time.Duration(cfg.Server.ShutdownTimeout)
	if grace <= need {
		t.Errorf("terminationGracePeriodSeconds %v must exceed preStop + drainDelay + shutdownTimeout = %v", grace, need)
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

func selectorMatches(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(labels.Set(podLabels))
}

// readFile reads a file relative to the repository root.
func readFile(t *testing.T, h helmCLI, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
