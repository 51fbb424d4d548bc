package pre2026

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-gateway/gateway/internal/seal"
)

// TestBoundsAsDocumented: the fixed bounds of the pre-2026 edge that SECURITY.md's resource
// table states (not settings, so no configuration test sees them) are the code's.
func TestBoundsAsDocumented(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, tt := range []struct {
		pattern string
		want    []int
	}{
		{`the ([0-9]+) most recently changed sessions, ([0-9]+) KiB in all \(at most ([0-9,]+) bytes sealed\), ([0-9]+) subscriptions per session`,
			[]int{maxStateSessions, maxStateBytes >> 10, seal.SealedLen(maxStateBytes), maxSessionSubscriptions}},
		{`changes paced per caller across replicas, ([0-9]+) back to back and ([0-9]+) a second after`,
			[]int{stateChangeBurst, stateChangeRate}},
		{`per caller .legacy.maxPendingPerCaller. \(([0-9]+)\), ([0-9,]+) per replica`,
			[]int{defaultMaxPendingPerCaller, defaultMaxPending}},
		{`A pre-2026 client's answers on their way to another replica \| ([0-9]+) per caller at once, ([0-9,]+) per replica, each for at most ([0-9]+) s`,
			[]int{defaultMaxForwardsPerCaller, defaultMaxPending, int(defaultForwardTimeout / time.Second)}},
		{`Pre-2026 level cache \(per replica\) \| ([0-9,]+) sessions per replica, ([0-9,]+) of one caller`,
			[]int{levelCacheMax, levelCacheMax / levelShareDivisor}},
		{`Answer ids known used \(replay refusal without Redis\) \| ([0-9,]+) per replica`, []int{maxUsed}},
	} {
		m := regexp.MustCompile(tt.pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("SECURITY.md no longer says %q: reword this check with the document", tt.pattern)
			continue
		}
		for i, want := range tt.want {
			if got, _ := strconv.Atoi(strings.ReplaceAll(m[i+1], ",", "")); got != want {
				t.Errorf("SECURITY.md: %q states %s; the code's bound is %d", m[0], m[i+1], want)
			}
		}
	}
}
