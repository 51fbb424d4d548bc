package testredis

import (
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestStartAnswersPing(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr(), ""); err != nil {
		t.Fatalf("ping %s: %v", s.Addr(), err)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Errorf("Addr() = %q, want a 127.0.0.1 address", s.Addr())
	}
	if want := "redis://" + s.Addr() + "/0"; s.URL() != want {
		t.Errorf("URL() = %q, want %q", s.URL(), want)
	}
}

func TestPassword(t *testing.T) {
	s := Start(t, WithPassword("s3cret"))
	tests := []struct {
		name     string
		password string
		wantErr  bool
	}{
		{name: "right password", password: "s3cret"},
		{name: "no password", password: "", wantErr: true},
		{name: "wrong password", password: "nope", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ping(s.Addr(), tt.password)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ping err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
	if !strings.Contains(s.URL(), ":s3cret@") {
		t.Errorf("URL() = %q, want the password in it", s.URL())
	}
}

func TestStopAndRestartKeepPort(t *testing.T) {
	s := Start(t)
	addr := s.Addr()
	s.Stop()
	if err := ping(addr, ""); err == nil {
		t.Fatal("ping after Stop succeeded, want an error")
	}
	s.Stop() // idempotent
	s.Restart()
	if s.Addr() != addr {
		t.Fatalf("Addr after Restart = %q, want %q", s.Addr(), addr)
	}
	if err := ping(addr, ""); err != nil {
		t.Fatalf("ping after Restart: %v", err)
	}
}

// fatalRecorder captures Fatalf so the missing-binary failure can be
// observed without failing this test.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = format
	r.mu.Unlock()
	runtime.Goexit()
}

func TestMissingBinaryFailsWithInstallHint(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(rec, WithBinary("redis-server-that-does-not-exist"))
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !strings.Contains(rec.msg, "install redis-server") {
		t.Fatalf("Fatalf message = %q, want an install hint", rec.msg)
	}
}
