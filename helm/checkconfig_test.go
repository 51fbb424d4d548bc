package helm

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

var gatewayBin = struct {
	once sync.Once
	path string
	err  error
	out  []byte
}{}

// TestMain removes the gateway binary checkWithGateway built: each run of the package's tests
// would otherwise leave one (tens of megabytes) in the temporary directory.
func TestMain(m *testing.M) {
	code := m.Run()
	if gatewayBin.path != "" {
		_ = os.RemoveAll(filepath.Dir(gatewayBin.path))
	}
	os.Exit(code)
}

// checkWithGateway validates the rendered config.yaml with the gateway's own loader (`gateway
// check-config`, with the container's extra arguments such as --force), so the chart can never
// render a configuration the binary it deploys would refuse.
func checkWithGateway(t *testing.T, cm *corev1.ConfigMap, c corev1.Container) {
	t.Helper()
	root := repoRoot(t)
	gatewayBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "helm-gateway-")
		if err != nil {
			gatewayBin.err = err
			return
		}
		gatewayBin.path = filepath.Join(dir, "gateway")
		cmd := exec.Command("go", "build", "-o", gatewayBin.path, "./cmd/gateway")
		cmd.Dir = root
		gatewayBin.out, gatewayBin.err = cmd.CombinedOutput()
	})
	if gatewayBin.err != nil {
		t.Fatalf("building the gateway: %v\n%s", gatewayBin.err, gatewayBin.out)
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	// --static: the secret files the configuration names are mounted in the pod, not here.
	args := append([]string{"check-config", "--static", "--config", file}, c.Args[min(3, len(c.Args)):]...)
	out, err := exec.Command(gatewayBin.path, args...).CombinedOutput()
	if err != nil {
		t.Errorf("gateway %v refuses the rendered config: %v\n%s\n--- config.yaml ---\n%s", args, err, out, cm.Data["config.yaml"])
	}
}
