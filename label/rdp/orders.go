package rdp

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// PaperOrders returns the 298 Rényi orders of the PATE 2018 paper scripts,
// concat(arange(2, 101, 0.5), logspace(log10 100, log10 500, 100)), in the
// scripts' own (unsorted, 100.0 appears twice) order.
func PaperOrders() []float64 {
	out := make([]float64, 0, 298)
	for i := 0; i < 198; i++ {
		out = append(out, 2+0.5*float64(i))
	}
	start, stop := math.Log10(100), math.Log10(500)
	step := (stop - start) / 99
	for i := 0; i < 100; i++ {
		y := float64(i)*step + start
		if i == 99 {
			y = stop
		}
		out = append(out, math.Pow(10, y))
	}
	return out
}

// DefaultOrders returns the PATE 2018 paper orders (see PaperOrders),
// deduplicated and sorted increasingly: 297 values from 2 to 500.
func DefaultOrders() []float64 {
	return sortedUnique(PaperOrders())
}

// PATE2017Orders returns the orders 2..9 that correspond to the moments
// l = 1..8 of the PATE 2017 moments accountant (order = l+1).
func PATE2017Orders() []float64 {
	out := make([]float64, 8)
	for i := range out {
		out[i] = float64(i + 2)
	}
	return out
}

// ParseOrders parses an order specification: "default" (DefaultOrders),
// "pate2017" (PATE2017Orders), an integer range "a:b" (a, a+1, …, b), or a
// comma-separated list of numbers. Every order must be finite and > 1; the
// result is sorted and deduplicated.
func ParseOrders(s string) ([]float64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "default", "":
		return DefaultOrders(), nil
	case "pate2017":
		return PATE2017Orders(), nil
	}
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("rdp: order range %q: %w", s, err)
		}
		b, err := strconv.Atoi(strings.TrimSpace(hi))
		if err != nil {
			return nil, fmt.Errorf("rdp: order range %q: %w", s, err)
		}
		if a < 2 || b < a || b-a > 100000 {
			return nil, fmt.Errorf("rdp: order range %q: need 2 <= a <= b", s)
		}
		out := make([]float64, 0, b-a+1)
		for v := a; v <= b; v++ {
			out = append(out, float64(v))
		}
		return out, nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("rdp: order %q: %w", f, err)
		}
		if !(v > 1) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("rdp: order %q: must be a finite number > 1", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("rdp: no orders in %q", s)
	}
	return sortedUnique(out), nil
}

func sortedUnique(in []float64) []float64 {
	out := append([]float64(nil), in...)
	sort.Float64s(out)
	j := 0
	for i, v := range out {
		if i == 0 || v != out[j-1] {
			out[j] = v
			j++
		}
	}
	return out[:j]
}
