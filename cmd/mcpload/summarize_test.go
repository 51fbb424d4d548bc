package main

import (
	"io"
	"testing"
)

func TestFailures(t *testing.T) {
	for _, tt := range []struct {
		in   map[string]int
		want string
	}{
		{nil, "0"},
		{map[string]int{}, "0"},
		{map[string]int{"timeout": 2, "http_503": 1}, "3 (http_503:1,timeout:2)"},
	} {
		if got := failures(tt.in); got != tt.want {
			t.Errorf("failures(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRunFlags(t *testing.T) {
	rf, err := parseRunFlags([]string{"-url", "http://127.0.0.1:1/mcp", "-c", "4", "-mix", "call:3,list:1",
		"-cpu", "proxy=10,11", "-cpu", "backend=12", "-scenario", "s", "-round", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rf.cfg.Concurrency != 4 || len(rf.cfg.Mix) != 2 || rf.scenario != "s" || rf.round != 2 {
		t.Fatalf("parsed %+v", rf)
	}
	if len(rf.cfg.CPU) != 2 || rf.cfg.CPU[0].Name != "proxy" || len(rf.cfg.CPU[0].PIDs) != 2 || rf.cfg.CPU[1].PIDs[0] != 12 {
		t.Fatalf("cpu groups %+v", rf.cfg.CPU)
	}
	for _, bad := range [][]string{{"-mix", "nope"}, {"-cpu", "proxy"}, {"-token-file", "no/such/file"}} {
		if _, err := parseRunFlags(bad, io.Discard); err == nil {
			t.Errorf("parseRunFlags(%q) gave no error", bad)
		}
	}
}

// TestGauge reads an unlabelled metric from Prometheus text, not one whose name it prefixes.
func TestGauge(t *testing.T) {
	text := []byte("# HELP go_memstats_heap_inuse_bytes x\ngo_memstats_heap_inuse_bytes_total 9\ngo_memstats_heap_inuse_bytes 4.194304e+06\ngo_goroutines 12\n")
	if v, ok := gauge(text, "go_memstats_heap_inuse_bytes"); !ok || v != 4194304 {
		t.Fatalf("gauge = %v, %v; want 4194304, true", v, ok)
	}
	if _, ok := gauge(text, "go_memstats_stack_inuse_bytes"); ok {
		t.Fatal("a missing metric was found")
	}
}
