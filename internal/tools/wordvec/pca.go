package main

import (
	"math"
	"slices"
)

// project centres the vectors on their mean and projects them on their first dims principal
// components, largest variance first, each component's sign fixed so that its largest entry is
// positive: the output depends on nothing but the input.
func project(sel *selected, drop, dims int) *table {
	n, d := len(sel.vecs), len(sel.vecs[0])
	mean := meanOf(sel.vecs)
	cov := covariance(sel.vecs)
	c := make([]float64, d)
	comps := principal(cov, drop+dims)[drop:]
	t := &table{dims: dims, words: sel.words, vecs: make([][]int8, n)}
	p := make([]float64, dims)
	for k, v := range sel.vecs {
		for j := range v {
			c[j] = v[j] - mean[j]
		}
		for m, comp := range comps {
			p[m] = dot(comp, c)
		}
		t.vecs[k] = quantise(p)
	}
	return t
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// principal returns the eigenvectors of the symmetric matrix a with the k largest eigenvalues,
// by cyclic Jacobi rotations (a is small: one row and column per dimension).
func principal(a [][]float64, k int) [][]float64 {
	d := len(a)
	v := make([][]float64, d) // columns are the eigenvectors
	for i := range v {
		v[i] = make([]float64, d)
		v[i][i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		off := 0.0
		for p := range d {
			for q := p + 1; q < d; q++ {
				off += a[p][q] * a[p][q]
			}
		}
		if off < 1e-18 {
			break
		}
		for p := range d {
			for q := p + 1; q < d; q++ {
				rotate(a, v, p, q)
			}
		}
	}
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		switch {
		case a[x][x] > a[y][y]:
			return -1
		case a[x][x] < a[y][y]:
			return 1
		}
		return 0
	})
	comps := make([][]float64, k)
	for m := range comps {
		col := order[m]
		comp := make([]float64, d)
		big := 0
		for i := range d {
			comp[i] = v[i][col]
			if math.Abs(comp[i]) > math.Abs(comp[big]) {
				big = i
			}
		}
		if comp[big] < 0 {
			for i := range comp {
				comp[i] = -comp[i]
			}
		}
		comps[m] = comp
	}
	return comps
}

// rotate zeroes a[p][q] by one Jacobi rotation, accumulated into v.
func rotate(a, v [][]float64, p, q int) {
	if math.Abs(a[p][q]) < 1e-300 {
		return
	}
	theta := (a[q][q] - a[p][p]) / (2 * a[p][q])
	t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
	if theta < 0 {
		t = -t
	}
	c := 1 / math.Sqrt(t*t+1)
	s := t * c
	d := len(a)
	for k := range d {
		akp, akq := a[k][p], a[k][q]
		a[k][p], a[k][q] = c*akp-s*akq, s*akp+c*akq
	}
	for k := range d {
		apk, aqk := a[p][k], a[q][k]
		a[p][k], a[q][k] = c*apk-s*aqk, s*apk+c*aqk
	}
	for k := range d {
		vkp, vkq := v[k][p], v[k][q]
		v[k][p], v[k][q] = c*vkp-s*vkq, s*vkp+c*vkq
	}
}

func meanOf(vecs [][]float64) []float64 {
	mean := make([]float64, len(vecs[0]))
	for _, v := range vecs {
		for j, x := range v {
			mean[j] += x / float64(len(vecs))
		}
	}
	return mean
}

// covariance is the (unnormalised) covariance matrix of vecs about their mean.
func covariance(vecs [][]float64) [][]float64 {
	d := len(vecs[0])
	mean := meanOf(vecs)
	cov := make([][]float64, d)
	for i := range cov {
		cov[i] = make([]float64, d)
	}
	c := make([]float64, d)
	for _, v := range vecs {
		for j := range v {
			c[j] = v[j] - mean[j]
		}
		for i := range d {
			for j := i; j < d; j++ {
				cov[i][j] += c[i] * c[j]
			}
		}
	}
	for i := range d {
		for j := 0; j < i; j++ {
			cov[i][j] = cov[j][i]
		}
	}
	return cov
}
