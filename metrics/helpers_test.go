package metrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// newTestRecorder builds a recorder on a fresh pedantic registry, which
// checks each gathered metric against its descriptor.
func newTestRecorder(t testing.TB, opts Options) (*Recorder, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	r, err := New(reg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, reg
}

// series gathers reg and returns the series of the named family as
// `{k="v",...}` → value: the counter or gauge value, or for a histogram its
// sample count.
func series(t testing.TB, reg prometheus.Gatherer, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[labelKey(m)] = sampleValue(m)
		}
	}
	return out
}

func labelKey(m *dto.Metric) string {
	parts := make([]string, 0, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
	}
	slices.Sort(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func sampleValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// assertSeries fails unless the family holds exactly want.
func assertSeries(t testing.TB, reg prometheus.Gatherer, name string, want map[string]float64) {
	t.Helper()
	got := series(t, reg, name)
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s%s = %v (present %t), want %v", name, k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s%s = %v present, not expected", name, k, v)
		}
	}
}

// wantErrs fails unless err matches every sentinel in want, or is nil when
// want is empty.
func wantErrs(t testing.TB, err error, want ...error) {
	t.Helper()
	if len(want) == 0 && err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if len(want) > 0 && err == nil {
		t.Fatalf("no error, want %v", want)
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("error %v does not match %v", err, w)
		}
	}
}
