package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram bucket layout: values below 2^(histSubBits+1) ns have a bucket each; above, every
// power of two is split into 2^histSubBits buckets, so a bucket's width is under 1/128 of its
// lower bound. This is the HdrHistogram idea with fixed precision and no dependency.
const (
	histSubBits  = 7
	histSubCount = 1 << histSubBits // buckets per power of two
	histLinear   = 2 * histSubCount // values recorded exactly
	histMaxShift = 40               // 2^(40+8) ns ≈ 78 hours, far above any request timeout
	histBuckets  = histLinear + histMaxShift*histSubCount
)

// Histogram records durations with bounded relative error (< 0.8%) in constant memory. The zero
// value is ready to use. It is not safe for concurrent use: give each worker its own and Merge.
type Histogram struct {
	counts [histBuckets]uint64
	total  uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

// Record adds one observation; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	if h.total == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.total++
	h.sum += d
}

// Merge adds every observation of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.total += o.total
	h.sum += o.sum
}

// Count returns the number of observations.
func (h *Histogram) Count() uint64 { return h.total }

// Max returns the largest observation, exactly.
func (h *Histogram) Max() time.Duration { return h.max }

// Min returns the smallest observation, exactly.
func (h *Histogram) Min() time.Duration { return h.min }

// Mean returns the arithmetic mean, exactly; zero when empty.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return h.sum / time.Duration(h.total)
}

// Quantile returns the value at quantile q in [0,1] using the nearest-rank definition: the
// smallest recorded value v such that at least ceil(q·n) observations are ≤ v. The answer is the
// upper edge of v's bucket, clamped to [Min, Max], so it is within 0.8% above the exact rank.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := time.Duration(bucketHigh(i))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// bucketOf maps a value in ns to its bucket index.
func bucketOf(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	shift := bits.Len64(v) - (histSubBits + 1) // ≥ 1 here
	if shift > histMaxShift {
		return histBuckets - 1
	}
	mantissa := v >> shift // in [histSubCount, 2·histSubCount)
	return histLinear + (shift-1)*histSubCount + int(mantissa-histSubCount)
}

// bucketHigh returns the largest value that maps to bucket i.
func bucketHigh(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	k := i - histLinear
	shift := k/histSubCount + 1
	mantissa := uint64(k%histSubCount + histSubCount)
	return (mantissa+1)<<shift - 1
}
