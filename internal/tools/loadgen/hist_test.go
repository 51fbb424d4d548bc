package loadgen

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramBucketsRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 255, 256, 257, 1000, 1 << 20, 123456789, 1 << 40} {
		i := bucketOf(v)
		if hi := bucketHigh(i); hi < v {
			t.Errorf("bucketHigh(bucketOf(%d)) = %d, below the value", v, hi)
		}
		if i > 0 && bucketHigh(i-1) >= v {
			t.Errorf("value %d also fits the previous bucket (high %d)", v, bucketHigh(i-1))
		}
		if got := bucketOf(bucketHigh(i)); got != i {
			t.Errorf("bucketOf(bucketHigh(%d)) = %d", i, got)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	tests := []struct {
		name string
		vals []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"single", []time.Duration{42}, 0.99, 42},
		{"exact small p50", seq(1, 100), 0.50, 50},
		{"exact small p90", seq(1, 100), 0.90, 90},
		{"exact small p99", seq(1, 100), 0.99, 99},
		{"q=1 is max", seq(1, 100), 1, 100},
		{"q=0 is min", seq(1, 100), 0, 1},
		{"clamped to max", []time.Duration{time.Second}, 0.5, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tt.vals {
				h.Record(v)
			}
			if got := h.Quantile(tt.q); got != tt.want {
				t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

func seq(from, to int) []time.Duration {
	var out []time.Duration
	for i := from; i <= to; i++ {
		out = append(out, time.Duration(i))
	}
	return out
}

// TestHistogramAgainstSortedSamples checks the promised relative error against the exact
// nearest-rank quantile of sorted samples, on a long-tailed distribution split over workers.
func TestHistogramAgainstSortedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var parts [4]Histogram
	var all []time.Duration
	for i := range 100_000 {
		v := time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
		if i%100 == 0 {
			v *= 50 // a tail
		}
		parts[i%len(parts)].Record(v)
		all = append(all, v)
	}
	var h Histogram
	for i := range parts {
		h.Merge(&parts[i])
	}
	slices.Sort(all)
	if h.Count() != uint64(len(all)) || h.Min() != all[0] || h.Max() != all[len(all)-1] {
		t.Fatalf("count/min/max = %d/%v/%v, want %d/%v/%v", h.Count(), h.Min(), h.Max(), len(all), all[0], all[len(all)-1])
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		exact := all[int(float64(len(all))*q+0.999999)-1]
		got := h.Quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/histSubCount {
			t.Errorf("q%v = %v, exact %v: outside [exact, exact·(1+1/%d)]", q, got, exact, histSubCount)
		}
	}
}

func TestHistogramMean(t *testing.T) {
	var h Histogram
	for _, v := range []time.Duration{-5, 10, 20, 30} {
		h.Record(v)
	}
	if h.Mean() != 15 || h.Min() != 0 {
		t.Errorf("mean %v min %v, want 15 and 0 (negative recorded as 0)", h.Mean(), h.Min())
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	v := time.Duration(1)
	for b.Loop() {
		v = v*1103515245 + 12345
		h.Record(v & (1<<32 - 1))
	}
}
