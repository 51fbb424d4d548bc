package helm

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// everyResource turns on every optional resource of the chart, so each name it derives is
// rendered.
var everyResource = []string{
	"redis.internal.enabled=true", "autoscaling.enabled=true",
	"networkPolicy.enabled=true", "ingress.enabled=true",
	"metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true",
	"metrics.grafanaDashboard.enabled=true",
}

// TestResourceNames: whatever release name Helm accepts (at most 53 characters of lower-case
// letters, digits, '-' and '.') and whatever fullnameOverride, every object the chart renders
// has a name the API server accepts for its kind (a Service's is a DNS-1035 label: at most 63
// characters, starting with a letter, no dots), every label value is valid, and the names the
// gateway dials (the in-chart Redis, the helm test's URL) are the Services rendered. A release
// whose names cannot be valid is refused at render time, naming fullnameOverride.
func TestResourceNames(t *testing.T) {
	h := newHelm(t)
	longest := "a-release-name-as-long-as-helm-allows-fifty-three-chr"
	if len(longest) != 53 {
		t.Fatalf("the longest release name has %d characters, want 53", len(longest))
	}
	cases := []struct {
		name, release string
		sets          []string
		refused       bool
	}{
		{name: "longest release name", release: longest},
		{name: "release name holding the chart name", release: "mcp-gateway-" + longest[:41]},
		{name: "longest fullnameOverride", release: "rel", sets: []string{"fullnameOverride=" + strings.Repeat("g", 63)}},
		{name: "fullnameOverride too long", release: "rel", sets: []string{"fullnameOverride=" + strings.Repeat("gateway-", 12)}},
		{name: "nameOverride too long", release: "rel", sets: []string{"nameOverride=" + strings.Repeat("n", 70)}},
		{name: "release name with a dot", release: "team.gateway", refused: true},
		{name: "release name opening with a digit", release: "1st", refused: true},
		{name: "fullnameOverride with a dot", release: "rel", sets: []string{"fullnameOverride=mcp.gateway"}, refused: true},
		{name: "dotted release with an override", release: "team.gateway", sets: []string{"fullnameOverride=team-gateway"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"template", tc.release, chartDir, "--namespace", namespace,
				"--values", filepath.Join("helm", "testdata", "minimal.yaml")}
			for _, s := range append(append([]string{"redis.url="}, everyResource...), tc.sets...) {
				args = append(args, "--set", s)
			}
			out, err := h.run(t, args...)
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "fullnameOverride") {
					t.Fatalf("rendering: %v, want a refusal naming fullnameOverride", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("helm template: %v", err)
			}
			checkNames(t, decodeAll(t, out))
		})
	}
}

// checkNames checks every rendered name against the rule of its kind, and that the names the
// gateway and the test Pod dial are rendered Services.
func checkNames(t *testing.T, m manifests) {
	t.Helper()
	services := map[string]bool{}
	var objects []metav1.Object
	for _, o := range m.typed {
		objects = append(objects, o.(metav1.Object))
	}
	for _, u := range m.custom {
		objects = append(objects, u)
	}
	for _, o := range objects {
		name := o.GetName()
		var problems []string
		if _, ok := o.(*corev1.Service); ok {
			services[name] = true
			problems = validation.IsDNS1035Label(name)
		} else {
			problems = validation.IsDNS1123Subdomain(name)
		}
		if len(problems) > 0 {
			t.Errorf("%T %q: %v", o, name, problems)
		}
		for k, v := range o.GetLabels() {
			if p := validation.IsValidLabelValue(v); len(p) > 0 {
				t.Errorf("%T %q: label %s=%q: %v", o, name, k, v, p)
			}
		}
		// The in-chart Redis's objects are labelled as its component, the others as the
		// gateway's (the helm test Pod as the test).
		want := "gateway"
		if strings.HasSuffix(name, "-redis") {
			want = "redis"
		} else if _, ok := o.(*corev1.Pod); ok {
			want = "test"
		}
		if c := o.GetLabels()["app.kubernetes.io/component"]; c != want {
			t.Errorf("%T %q: component label %q, want %q", o, name, c, want)
		}
	}
	if len(services) < 2 {
		t.Fatalf("rendered Services %v, want the gateway's and the in-chart Redis's", services)
	}
	for _, o := range m.typed {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			if _, ok := o.Data["config.yaml"]; !ok {
				continue
			}
			cfg := parseConfig(t, o)
			u, err := url.Parse(cfg.Redis.URL)
			if err != nil || !services[u.Hostname()] {
				t.Errorf("the gateway dials Redis at %q, which is no rendered Service (%v)", cfg.Redis.URL, err)
			}
		case *corev1.Pod:
			target := o.Spec.Containers[0].Args[len(o.Spec.Containers[0].Args)-1]
			u, err := url.Parse(target)
			if err != nil || !services[strings.TrimSuffix(u.Hostname(), "."+namespace+".svc")] {
				t.Errorf("the helm test Pod checks %q, which is no rendered Service (%v)", target, err)
			}
		case *appsv1.Deployment:
			for _, c := range o.Spec.Template.Spec.Containers {
				for _, e := range c.Env {
					if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
						if p := validation.IsDNS1123Subdomain(r.SecretKeyRef.Name); len(p) > 0 {
							t.Errorf("%s reads a Secret named %q: %v", o.Name, r.SecretKeyRef.Name, p)
						}
					}
				}
			}
		}
	}
}
