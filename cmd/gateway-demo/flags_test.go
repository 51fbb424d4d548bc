package main

import (
	"errors"
	"flag"
	"io"
	"net"
	"strings"
	"testing"
)

// TestParseDemoFlags: the demo listens on loopback only, on the ports `make demo` documents
// unless told otherwise (port 0 included), and refuses what it does not understand.
func TestParseDemoFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    demoFlags
		wantErr string
	}{
		{nil, demoFlags{listen: defaultMCPAddr, admin: defaultAdminAddr}, ""},
		{[]string{"--listen", "127.0.0.1:0", "--admin-listen", "[::1]:0", "--no-auth"}, demoFlags{"127.0.0.1:0", "[::1]:0", true}, ""},
		{[]string{"--listen", "0.0.0.0:8080"}, demoFlags{}, "loopback addresses only"},
		{[]string{"--admin-listen", ":9090"}, demoFlags{}, "loopback addresses only"},
		{[]string{"serve"}, demoFlags{}, `unexpected argument "serve"`},
		{[]string{"--nope"}, demoFlags{}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseDemoFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseDemoFlags = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	var help strings.Builder
	if _, err := parseDemoFlags([]string{"--help"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	// --help is where a newcomer looks for what else the command does: it names the issuer
	// sub-command and still lists every flag.
	for _, want := range []string{"gateway-demo issuer --audience URL", "'gateway-demo issuer --help'", "-listen address", "-admin-listen address", "-no-auth"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, help.String())
		}
	}
}

// TestListenInUse: a listener whose port is taken (a second make demo, or something else on
// 8080) says which flag moves it, as a whole command line (make demo passes no flags on), rather
// than leave the newcomer with a bind error.
func TestListenInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = listen("admin listener", "--admin-listen", taken.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "admin listener: ") || !strings.Contains(err.Error(), "; go run ./cmd/gateway-demo --admin-listen 127.0.0.1:0 picks a free port") {
		t.Errorf("err = %v, want the flag that moves the listener", err)
	}
}
