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

func TestDo(t *testing.T) {
	s := Start(t, WithPassword("pw"))
	tests := []struct {
		args    []string
		want    string
		wantErr bool
	}{
		{args: []string{"SET", "k", "hello world"}, want: "OK"},
		{args: []string{"GET", "k"}, want: "hello world"},
		{args: []string{"INCR", "n"}, want: "1"},
		{args: []string{"NOSUCHCOMMAND"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := s.Do(tt.args...)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("Do = %q, %v; want %q, wantErr %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestClusterOwnsAllSlots(t *testing.T) {
	s := Start(t, WithCluster())
	for range 2 { // also after a restart, which keeps nodes.conf
		info, err := s.Do("CLUSTER", "INFO")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Fatalf("CLUSTER INFO:\n%s", info)
		}
		s.Restart()
	}
}

func TestSentinelKnowsMaster(t *testing.T) {
	master := Start(t, WithPassword("masterpw"))
	sentinel := Start(t, WithSentinelFor(master, "gw"), WithPassword("sentinelpw"))
	got, err := sentinel.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "gw")
	if want := strings.Replace(master.Addr(), ":", "\n", 1); err != nil || got != want {
		t.Fatalf("GET-MASTER-ADDR-BY-NAME = %q, %v; want %q", got, err, want)
	}
	if err := ping(sentinel.Addr(), ""); err == nil {
		t.Fatal("sentinel answered PING without its password")
	}
}

func TestPauseHangsAndResumeAnswers(t *testing.T) {
	s := Start(t)
	s.Pause()
	// A paused server accepts the connection (the kernel does) but never answers.
	if err := ping(s.Addr(), ""); err == nil {
		t.Fatal("ping while paused succeeded, want a timeout")
	}
	s.Resume()
	if err := ping(s.Addr(), ""); err != nil {
		t.Fatalf("ping after Resume: %v", err)
	}
	s.Pause() // Stop (the cleanup) must still terminate a paused server.
	s.Stop()
	if err := ping(s.Addr(), ""); err == nil {
		t.Fatal("ping after Stop succeeded, want an error")
	}
}
