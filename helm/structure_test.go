package helm

import (
	"path"
	"slices"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// checkMounts: config.yaml and the secrets directory are mounted where the config says, and
// every secret file the config names is provided by a source of the projected volume.
func checkMounts(t *testing.T, m manifests, spec corev1.PodSpec, c corev1.Container, cfg gatewayConfig) {
	t.Helper()
	mounts := map[string]corev1.VolumeMount{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm
	}
	if vm, ok := mounts[configPath]; !ok || vm.SubPath != "config.yaml" || !vm.ReadOnly {
		t.Errorf("config.yaml mount: %+v", vm)
	} else if v := volume(t, spec, vm.Name); v.ConfigMap == nil || v.ConfigMap.Name != fullname {
		t.Errorf("config volume is not ConfigMap %s", fullname)
	}
	vm, ok := mounts[secretsDir]
	if !ok || !vm.ReadOnly {
		t.Fatalf("no read-only mount at %s", secretsDir)
	}
	v := volume(t, spec, vm.Name)
	if v.Projected == nil {
		t.Fatalf("secrets volume is not projected: %+v", v)
	}
	provided, complete := projectedFiles(m, v.Projected)
	for _, f := range configSecretFiles(cfg) {
		if path.Dir(f) != secretsDir {
			t.Errorf("secret file %s is outside %s", f, secretsDir)
		} else if complete && !provided[path.Base(f)] {
			t.Errorf("secret file %s is referenced by config.yaml but no Secret provides it", f)
		}
	}
}

func volume(t *testing.T, spec corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

// projectedFiles lists the file names the projected volume provides; complete is false when a
// source is a Secret outside the chart, whose keys are unknown here.
func projectedFiles(m manifests, p *corev1.ProjectedVolumeSource) (map[string]bool, bool) {
	files := map[string]bool{}
	complete := true
	for _, src := range p.Sources {
		switch {
		case src.Secret == nil:
		case len(src.Secret.Items) > 0:
			for _, it := range src.Secret.Items {
				files[it.Path] = true
			}
		case src.Secret.Name == fullname && count[*corev1.Secret](m) > 0:
			for _, s := range m.typed {
				if sec, ok := s.(*corev1.Secret); ok && sec.Name == fullname {
					for k := range sec.Data {
						files[k] = true
					}
				}
			}
		default:
			complete = false
		}
	}
	return files, complete
}

// configSecretFiles lists every secret the config reads from a file.
func configSecretFiles(cfg gatewayConfig) []string {
	var files []string
	for _, k := range cfg.MRTR.Keys {
		files = append(files, k.Secret.File)
	}
	if cfg.Redis.Password != nil {
		files = append(files, cfg.Redis.Password.File)
	}
	if cfg.Admin.Token != nil {
		files = append(files, cfg.Admin.Token.File)
	}
	for _, u := range cfg.Upstreams {
		for _, h := range u.Headers {
			if h.File != "" {
				files = append(files, h.File)
			}
		}
	}
	return files
}

// checkSelectors: everything that selects the gateway pods selects them, and only them.
func checkSelectors(t *testing.T, m manifests, dep *appsv1.Deployment) {
	t.Helper()
	podLabels := dep.Spec.Template.Labels
	if !selectorMatches(t, dep.Spec.Selector, podLabels) {
		t.Error("Deployment selector does not match its pod labels")
	}
	svc := find[*corev1.Service](t, m, fullname)
	checkService(t, svc, podLabels, "mcp->mcp")
	admin := find[*corev1.Service](t, m, fullname+"-admin")
	checkService(t, admin, podLabels, "admin->admin")
	if admin.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("admin Service type %q, want ClusterIP whatever service.type is", admin.Spec.Type)
	}
	for _, o := range m.typed {
		switch v := o.(type) {
		case *policyv1.PodDisruptionBudget:
			if !selectorMatches(t, v.Spec.Selector, podLabels) {
				t.Error("PodDisruptionBudget selector does not match the gateway pods")
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			ref := v.Spec.ScaleTargetRef
			if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != dep.Name {
				t.Errorf("HPA targets %+v, want Deployment %s", ref, dep.Name)
			}
			if dep.Spec.Replicas != nil {
				t.Error("with an HPA the Deployment must not set replicas (each upgrade would reset them)")
			}
		case *networkingv1.NetworkPolicy:
			if v.Name == fullname && !selectorMatches(t, &v.Spec.PodSelector, podLabels) {
				t.Error("NetworkPolicy does not select the gateway pods")
			}
		}
	}
	for _, sm := range m.customByKind("ServiceMonitor") {
		checkServiceMonitor(t, sm, admin, svc, secretName(t, dep.Spec.Template.Spec))
	}
}

func checkService(t *testing.T, svc *corev1.Service, podLabels map[string]string, ports ...string) {
	t.Helper()
	if !selectorMatches(t, &metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, podLabels) {
		t.Error("Service selector does not match the gateway pods")
	}
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("Service sessionAffinity = %q: any replica serves any request", svc.Spec.SessionAffinity)
	}
	var names []string
	for _, p := range svc.Spec.Ports {
		names = append(names, p.Name+"->"+p.TargetPort.String())
	}
	if !slices.Equal(names, ports) {
		t.Errorf("Service %s ports = %v, want %v, to the named container ports", svc.Name, names, ports)
	}
}

// secretName is the Secret the pod's secrets directory comes from first: the chart's or
// secrets.existingSecret.
func secretName(t *testing.T, spec corev1.PodSpec) string {
	t.Helper()
	src := volume(t, spec, "secrets").Projected.Sources
	if len(src) == 0 || src[0].Secret == nil {
		t.Fatal("the secrets volume has no Secret")
	}
	return src[0].Secret.Name
}

// checkServiceMonitor: the ServiceMonitor scrapes the admin port's /metrics of the gateway's
// admin Service, not of the MCP one, with the admin token from the pod's own Secret as its
// bearer (/metrics needs it).
func checkServiceMonitor(t *testing.T, sm *unstructured.Unstructured, admin, mcp *corev1.Service, secret string) {
	t.Helper()
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if !selectorMatches(t, &metav1.LabelSelector{MatchLabels: sel}, admin.Labels) {
		t.Errorf("ServiceMonitor selector %v does not match the admin Service labels", sel)
	}
	if selectorMatches(t, &metav1.LabelSelector{MatchLabels: sel}, mcp.Labels) {
		t.Errorf("ServiceMonitor selector %v matches the MCP Service too", sel)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("ServiceMonitor endpoints = %d, want 1", len(eps))
	}
	ep, _ := eps[0].(map[string]any)
	if ep["port"] != "admin" || ep["path"] != "/metrics" {
		t.Errorf("ServiceMonitor endpoint = %v, want port admin path /metrics", ep)
	}
	typ, _, _ := unstructured.NestedString(ep, "authorization", "type")
	cred, _, _ := unstructured.NestedStringMap(ep, "authorization", "credentials")
	if typ != "Bearer" || cred["name"] != secret || cred["key"] != "admin-token" {
		t.Errorf("ServiceMonitor authorization = %s %v, want Bearer from %s/admin-token", typ, cred, secret)
	}
}

// checkTestPod: the helm test hook asks the admin port's /readyz, as a non-root user.
func checkTestPod(t *testing.T, m manifests) {
	t.Helper()
	pod := find[*corev1.Pod](t, m, fullname+"-test-readyz")
	if pod.Annotations["helm.sh/hook"] != "test" {
		t.Error("test Pod is not a helm test hook")
	}
	svc := find[*corev1.Service](t, m, fullname+"-admin")
	want := "http://" + svc.Name + ".mcp.svc:" + strconv.Itoa(int(adminServicePort(svc))) + "/readyz"
	c := pod.Spec.Containers[0]
	if c.Args[len(c.Args)-1] != want || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("test Pod args %v, want the URL %s", c.Args, want)
	}
	if pod.Spec.SecurityContext == nil || !isTrue(pod.Spec.SecurityContext.RunAsNonRoot) {
		t.Error("test Pod must run as non-root")
	}
}

func adminServicePort(svc *corev1.Service) int32 {
	for _, p := range svc.Spec.Ports {
		if p.Name == "admin" {
			return p.Port
		}
	}
	return 0
}
