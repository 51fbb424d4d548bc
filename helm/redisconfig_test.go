package helm

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestRedisSettingsOfTheOperator: the chart sets config.redis's url and password (from
// redis.url, redis.internal and the password file) and leaves the rest of config.redis to the
// operator: a private CA for rediss://, the key prefix that keeps two releases on one Redis
// apart, the replicas a confirmation waits for, Sentinel addresses. The gateway accepts what
// renders (check-config). The chart's two keys set in config.redis are refused, and so are
// Sentinel or Cluster addresses beside redis.url.
func TestRedisSettingsOfTheOperator(t *testing.T) {
	h := newHelm(t)
	t.Run("beside redis.url", func(t *testing.T) {
		t.Parallel()
		m := h.renderMinimal(t, "redis.url=rediss://gateway@redis.data:6380/0", "redis.password=pw-of-the-test",
			"config.redis.keyPrefix=prod:", "config.redis.waitReplicas=1",
			"config.redis.tls.caFile=/etc/mcp-gateway/secrets/redis-ca.crt")
		cm := find[*corev1.ConfigMap](t, m, fullname)
		r := parseConfig(t, cm).Redis
		if r.URL != "rediss://gateway@redis.data:6380/0" || r.Password == nil || r.Password.File != secretsDir+"/redis-password" {
			t.Errorf("redis url %q, password %+v: want the chart's", r.URL, r.Password)
		}
		if r.KeyPrefix != "prod:" || r.WaitReplicas != 1 || r.TLS == nil || r.TLS.CAFile != secretsDir+"/redis-ca.crt" {
			t.Errorf("redis %+v: the operator's keyPrefix, waitReplicas and tls.caFile are lost", r)
		}
		checkWithGateway(t, cm, gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec))
	})
	t.Run("sentinel", func(t *testing.T) {
		t.Parallel()
		m := h.renderMinimal(t, "replicaCount=3", "config.redis.addrs[0]=sentinel-0.data:26379",
			"config.redis.addrs[1]=sentinel-1.data:26379", "config.redis.masterName=gateway")
		cm := find[*corev1.ConfigMap](t, m, fullname)
		if r := parseConfig(t, cm).Redis; len(r.Addrs) != 2 || r.MasterName != "gateway" || r.URL != "" {
			t.Errorf("redis %+v: want the two Sentinels and the master name, no url", r)
		}
		checkWithGateway(t, cm, gatewayContainer(t, find[*appsv1.Deployment](t, m, fullname).Spec.Template.Spec))
	})
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"url", []string{"config.redis.url=redis://r:6379"}, "config.redis.url is set by the chart: use redis.url"},
		{"password", []string{"redis.url=redis://r:6379", "config.redis.password.file=/x"}, "config.redis.password is set by the chart: use redis.password or redis.existingSecret"},
		{"addresses beside a url", []string{"redis.url=redis://r:6379", "config.redis.addrs[0]=s:26379", "config.redis.masterName=m"}, "config.redis.addrs names the Redis servers"},
		{"addresses beside the in-chart redis", []string{"redis.internal.enabled=true", "config.redis.addrs[0]=s:26379"}, "config.redis.addrs names the Redis servers"},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			t.Parallel()
			h.refused(t, tc.want, tc.sets...)
		})
	}
}
