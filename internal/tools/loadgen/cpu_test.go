package loadgen

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestStatTicks(t *testing.T) {
	// Fields 14 and 15 (utime, stime) are 7 and 5; the command name holds spaces and a ')'.
	line := "42 (we ird) name) S 1 42 42 0 -1 4194560 100 0 0 0 7 5 0 0 20 0 3 0 9 0 0\n"
	if got, err := statTicks([]byte(line)); err != nil || got != 12 {
		t.Fatalf("statTicks = %d, %v; want 12", got, err)
	}
	for _, bad := range []string{"", "42 no parens S 1", "42 (x) S 1 2 3", "42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 x 5 0"} {
		if _, err := statTicks([]byte(bad)); err == nil {
			t.Errorf("statTicks(%q) gave no error", bad)
		}
	}
}

func TestParseCPUGroup(t *testing.T) {
	g, err := ParseCPUGroup("proxy=12, 13")
	if err != nil || g.Name != "proxy" || len(g.PIDs) != 2 || g.PIDs[1] != 13 {
		t.Fatalf("ParseCPUGroup = %+v, %v", g, err)
	}
	for _, bad := range []string{"proxy", "=12", "proxy=", "proxy=12,x", "proxy=-1"} {
		if _, err := ParseCPUGroup(bad); err == nil {
			t.Errorf("ParseCPUGroup(%q) gave no error", bad)
		}
	}
}

// TestRunChargesCPU: a run that names this test process (which serves the backend and runs the
// load) reports a positive CPU time per request, and the text and table show it.
func TestRunChargesCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	_, url := startBackend(t, BackendConfig{Tools: 5})
	mix, _ := ParseMix("call")
	rep := runLoad(t, Config{URL: url, Concurrency: 2, Requests: 2000, Mix: mix,
		CPU: []CPUGroup{{Name: "self", PIDs: []int{os.Getpid()}}}})
	// 2000 requests take far more than one 10 ms tick of CPU in any process that serves them.
	if v := rep.CPU["self"]; !(v > 0) {
		t.Fatalf("CPU = %v, want a positive figure for self", rep.CPU)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "cpu self:") {
		t.Errorf("text report lacks the cpu line: %q, %v", text.String(), err)
	}
	rep.Scenario, rep.Target = "call", "direct"
	rows := Compare([]*Report{rep}, "direct")
	if rows[0].CPU["self"] != rep.CPU["self"] {
		t.Errorf("Compare dropped the CPU figure: %+v", rows[0])
	}
	var table bytes.Buffer
	if err := WriteRows(&table, rows); err != nil || !strings.Contains(table.String(), "self µs/req") {
		t.Errorf("table lacks the cpu column: %q, %v", table.String(), err)
	}
}

func TestRunRefusesMissingProcess(t *testing.T) {
	_, url := startBackend(t, BackendConfig{Tools: 1})
	mix, _ := ParseMix("call")
	r, err := New(Config{URL: url, Mix: mix, Requests: 1, CPU: []CPUGroup{{Name: "gone", PIDs: []int{1 << 30}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("Run with a missing process = %v, want an error naming its group", err)
	}
}
