package gateway

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestListenerSettingsNotNegative: every number the gateway's own listener settings hold
// (server.drainDelay, shutdownTimeout, readHeaderTimeout, idleTimeout, maxHeaderBytes, and any
// added later) refuses a negative value with its key path. Otherwise net/http reads a negative
// readHeaderTimeout as no timeout at all (a client may hold a connection open forever sending
// headers), a negative maxHeaderBytes as its own 1 MiB default, and a negative shutdownTimeout
// cuts every request in flight at once on SIGTERM and on every reload, all of it passed by
// check-config. The fields are walked, so a new one is covered without editing the test.
func TestListenerSettingsNotNegative(t *testing.T) {
	typ := reflect.TypeFor[ServerConfig]()
	checked := 0
	for i := range typ.NumField() {
		f := typ.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous || key == "" {
			continue // the endpoint settings mcphttp owns and validates itself
		}
		var negative string
		switch {
		case f.Type == reflect.TypeFor[time.Duration]():
			negative = "-1s"
		case f.Type.Kind() == reflect.Int:
			negative = "-1"
		default:
			continue
		}
		checked++
		t.Run(key, func(t *testing.T) {
			yaml := fmt.Sprintf("server: { %s: %s }\n", key, negative)
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadConfig("check-config", []string{"--config", file, "--no-auth", "--listen", "127.0.0.1:0",
				"--upstream", "a=http://127.0.0.1:1/mcp"}, func(string) string { return "" }, io.Discard)
			want := "server." + key + ": must not be negative"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: err = %v, want %q", yaml, err, want)
			}
		})
	}
	if checked < 5 {
		t.Fatalf("walked %d numeric listener settings, want at least the 5 known", checked)
	}
}
