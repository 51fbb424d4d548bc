package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPUGroup names processes whose CPU time a run charges to each HTTP request it made: the
// process being measured (a proxy and its workers) and the backend behind it. CPU time per
// request is steadier than throughput on a shared machine, where every process competes for the
// same cores, and it says what a hop costs rather than how fast this machine happened to be.
type CPUGroup struct {
	Name string
	PIDs []int
}

// ParseCPUGroup parses "name=pid[,pid...]".
func ParseCPUGroup(s string) (CPUGroup, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || name == "" || list == "" {
		return CPUGroup{}, fmt.Errorf("cpu group %q: want name=pid[,pid...]", s)
	}
	g := CPUGroup{Name: name}
	for p := range strings.SplitSeq(list, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || pid <= 0 {
			return CPUGroup{}, fmt.Errorf("cpu group %q: %q is not a process id", s, p)
		}
		g.PIDs = append(g.PIDs, pid)
	}
	return g, nil
}

// userHZ is the unit of the CPU times in /proc/PID/stat; Linux fixes it at 100 for user space.
const userHZ = 100

// ProcessCPU returns the user plus system CPU time pids have used so far, from /proc.
func ProcessCPU(pids []int) (time.Duration, error) {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, err
		}
		t, err := statTicks(b)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// statTicks returns utime+stime (fields 14 and 15) of a /proc/PID/stat line. The command name
// (field 2) is in parentheses and may hold spaces, so fields are counted after its last ')'.
func statTicks(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, errors.New("too few fields")
	}
	var sum int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// cpuMeter samples every group's CPU time at the start and end of the measured phase.
type cpuMeter struct {
	groups []CPUGroup
	start  []time.Duration
}

func startCPU(groups []CPUGroup) (*cpuMeter, error) {
	m := &cpuMeter{groups: groups}
	for _, g := range groups {
		t, err := ProcessCPU(g.PIDs)
		if err != nil {
			return nil, fmt.Errorf("cpu group %s: %w", g.Name, err)
		}
		m.start = append(m.start, t)
	}
	return m, nil
}

// perRequest returns each group's CPU microseconds per HTTP request since startCPU.
func (m *cpuMeter) perRequest(requests uint64) (map[string]float64, error) {
	if len(m.groups) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(m.groups))
	for i, g := range m.groups {
		t, err := ProcessCPU(g.PIDs)
		if err != nil {
			return nil, fmt.Errorf("cpu group %s: %w", g.Name, err)
		}
		if requests > 0 {
			out[g.Name] = float64(t-m.start[i]) / float64(time.Microsecond) / float64(requests)
		}
	}
	return out, nil
}
