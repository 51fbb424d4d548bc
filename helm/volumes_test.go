package helm

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestExtraVolumes: extraVolumes and extraVolumeMounts reach the gateway's pod, unless they take
// a name or a place the chart's own volumes have (the API server refuses a pod with two volumes
// of one name or two mounts at one path, and a mount inside the read-only secrets or TLS volume
// stops the container from starting): those are refused at render time, naming the value.
func TestExtraVolumes(t *testing.T) {
	h := newHelm(t)
	volume := func(name string) []string {
		return []string{"extraVolumes[0].name=" + name, "extraVolumes[0].configMap.name=ca-bundle"}
	}
	mount := func(path string) []string {
		return []string{"extraVolumeMounts[0].name=ca", "extraVolumeMounts[0].mountPath=" + path}
	}
	refused := []struct {
		name string
		sets []string
		want string
	}{
		{"a volume named config", volume("config"), "extraVolumes: config is the name of a volume of the chart"},
		{"a volume named tmp", volume("tmp"), "extraVolumes: tmp is the name of a volume of the chart"},
		{"a mount at /tmp", mount("/tmp"), "extraVolumeMounts: /tmp is where the chart mounts"},
		{"a mount at the config file", mount("/etc/mcp-gateway/config.yaml"), "extraVolumeMounts: /etc/mcp-gateway/config.yaml is where the chart mounts"},
		{"a mount in the secrets", mount("/etc/mcp-gateway/secrets/extra"), "extraVolumeMounts: /etc/mcp-gateway/secrets/extra is where the chart mounts"},
		{"a mount at the secrets, with a slash", mount("/etc/mcp-gateway/secrets/"), "extraVolumeMounts: /etc/mcp-gateway/secrets/ is where the chart mounts"},
		{"a mount in the TLS directory", append(mount("/etc/mcp-gateway/tls/ca.crt"), "tls.enabled=true", "tls.secretName=t"), "extraVolumeMounts: /etc/mcp-gateway/tls/ca.crt is where the chart mounts"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h.refused(t, tc.want, tc.sets...)
		})
	}
	t.Run("a volume of its own", func(t *testing.T) {
		t.Parallel()
		sets := append(volume("ca"), mount("/etc/ssl/extra")...)
		spec := find[*appsv1.Deployment](t, h.renderMinimal(t, sets...), fullname).Spec.Template.Spec
		if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ca" }) ||
			!slices.ContainsFunc(gatewayContainer(t, spec).VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/ssl/extra" }) {
			t.Errorf("volumes %+v / mounts %+v, want the extra volume mounted", spec.Volumes, gatewayContainer(t, spec).VolumeMounts)
		}
	})
}
