package main

import "testing"

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
