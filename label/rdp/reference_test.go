package rdp

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type refCase struct {
	Section string                     `json:"section"`
	Name    string                     `json:"name"`
	Inputs  map[string]json.RawMessage `json:"inputs"`
	Outputs map[string]json.RawMessage `json:"outputs"`
}

type refFile struct {
	OrdersLists map[string][]float64 `json:"orders_lists"`
	Histograms  map[string][]int64   `json:"histograms"`
	Cases       []refCase            `json:"cases"`
}

func loadRef(t *testing.T) *refFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pate_reference_dev.json"))
	if err != nil {
		t.Fatalf("read reference: %v", err)
	}
	// Non-finite values are strings; map them to JSON-decodable sentinels.
	s := strings.NewReplacer(`"inf"`, `1e999`, `"-inf"`, `-1e999`).Replace(string(b))
	_ = s
	var rf refFile
	if err := json.Unmarshal(b, &rf); err != nil {
		t.Fatalf("decode reference: %v", err)
	}
	return &rf
}

func num(t *testing.T, raw json.RawMessage) float64 {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return toF(t, v)
}

func toF(t *testing.T, v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case string:
		switch x {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		case "nan":
			return math.NaN()
		}
	}
	t.Fatalf("not a number: %v", v)
	return 0
}

func nums(t *testing.T, raw json.RawMessage) []float64 {
	t.Helper()
	var vs []any
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = toF(t, v)
	}
	return out
}

func ints(t *testing.T, raw json.RawMessage) []int64 {
	t.Helper()
	var out []int64
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return out
}

func bools(t *testing.T, raw json.RawMessage) []bool {
	t.Helper()
	var out []bool
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return out
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return s
}

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	if math.IsNaN(got) || math.IsNaN(want) || math.IsInf(got, 0) || math.IsInf(want, 0) {
		return false
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-300)
}

func checkF(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !relClose(got, want, tol) {
		t.Errorf("%s = %.17g, want %.17g (rel err %.3g)", what, got, want, math.Abs(got-want)/math.Abs(want))
	}
}

func checkFs(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !relClose(got[i], want[i], tol) {
			t.Errorf("%s[%d] = %.17g, want %.17g (rel err %.3g)", what, i, got[i], want[i], math.Abs(got[i]-want[i])/math.Abs(want[i]))
		}
	}
}

type queryItem struct {
	Counts []int64 `json:"counts"`
	Repeat int     `json:"repeat"`
}

func queryList(t *testing.T, raw json.RawMessage) []queryItem {
	t.Helper()
	var out []queryItem
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decode query list: %v", err)
	}
	return out
}

// checkConversion checks eps/order_opt/order_opt_index and the improved field.
func checkConversion(t *testing.T, orders, rdp []float64, delta float64, out map[string]json.RawMessage, tol float64) {
	t.Helper()
	eps, ord := EpsClassic(orders, rdp, delta)
	checkF(t, "eps", eps, num(t, out["eps"]), tol)
	if w := num(t, out["order_opt"]); ord != w {
		t.Errorf("order_opt = %v, want %v", ord, w)
	}
	if raw, ok := out["order_opt_index"]; ok {
		idx := int(num(t, raw))
		if orders[idx] != ord {
			t.Errorf("order_opt_index %d holds %v, got order %v", idx, orders[idx], ord)
		}
		// First argmin: no earlier index reaches the same value.
		for i := 0; i < idx; i++ {
			if rdp[i]-math.Log(delta)/(orders[i]-1) <= eps {
				t.Errorf("index %d (< %d) already attains the minimum", i, idx)
			}
		}
		if raw, ok := out["rdp_at_order_opt"]; ok {
			checkF(t, "rdp_at_order_opt", rdp[idx], num(t, raw), tol)
		}
	}
	if raw, ok := out["improved_conversion_tfprivacy_hp2022"]; ok {
		var imp map[string]json.RawMessage
		if err := json.Unmarshal(raw, &imp); err != nil {
			t.Fatal(err)
		}
		e, o := EpsImproved(orders, rdp, delta)
		checkF(t, "improved eps", e, num(t, imp["eps"]), tol)
		if w := num(t, imp["order_opt"]); o != w {
			t.Errorf("improved order_opt = %v, want %v", o, w)
		}
	}
}

func TestReferenceCases(t *testing.T) {
	rf := loadRef(t)
	if len(rf.Cases) != 42 {
		t.Fatalf("reference has %d cases, want 42", len(rf.Cases))
	}
	for _, tc := range rf.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			tol := 1e-12
			if strings.HasPrefix(tc.Section, "D") {
				tol = 1e-7
			}
			in, out := tc.Inputs, tc.Outputs
			var orders []float64
			if raw, ok := in["orders"]; ok {
				orders = rf.OrdersLists[str(t, raw)]
				if len(orders) == 0 {
					t.Fatalf("unknown orders list %s", raw)
				}
			}
			if raw, ok := in["l"]; ok {
				orders = nums(t, raw)
			}
			fn := tc.Name
			switch {
			case strings.HasPrefix(fn, "rdp_ind_gnmax_"):
				checkFs(t, "rdp", GaussianRDP(num(t, in["sigma"]), orders), nums(t, out["rdp"]), tol)
			case strings.HasPrefix(fn, "rdp_ind_threshold_"):
				checkFs(t, "rdp", ThresholdRDP(num(t, in["sigma1"]), orders), nums(t, out["rdp"]), tol)
			case strings.HasPrefix(fn, "eps_ind_gnmax_"):
				acc := NewAccountant(orders)
				acc.AddScaled(GaussianRDP(num(t, in["sigma"]), orders), num(t, in["T"]))
				checkConversion(t, orders, acc.Curve(), num(t, in["delta"]), out, tol)
			case strings.HasPrefix(fn, "eps_ind_confident_"):
				T, ans := num(t, in["T"]), num(t, in["answered"])
				th := ThresholdRDP(num(t, in["sigma1"]), orders)
				g := GaussianRDP(num(t, in["sigma2"]), orders)
				rdp := make([]float64, len(orders))
				for i := range rdp {
					rdp[i] = T*th[i] + ans*g[i]
				}
				checkConversion(t, orders, rdp, num(t, in["delta"]), out, tol)
			case strings.HasPrefix(fn, "gnmax_"):
				sigma := num(t, in["sigma"])
				logq := LogQGaussian(ints(t, in["counts"]), sigma)
				checkF(t, "logq", logq, num(t, out["logq"]), tol)
				checkF(t, "q", math.Exp(logq), num(t, out["q"]), tol)
				got := GaussianDataDependentRDP(logq, sigma, orders)
				checkFs(t, "rdp", got, nums(t, out["rdp"]), tol)
				eqInd := bools(t, out["rdp_equals_data_independent"])
				ind := GaussianRDP(sigma, orders)
				for i := range got {
					if (got[i] == ind[i]) != eqInd[i] {
						t.Errorf("rdp[%d] equals data-independent: %v, want %v", i, got[i] == ind[i], eqInd[i])
					}
				}
			case strings.HasPrefix(fn, "rdp_gaussian_"):
				got := GaussianDataDependentRDP(num(t, in["logq"]), num(t, in["sigma"]), orders)
				checkFs(t, "rdp", got, nums(t, out["rdp"]), tol)
			case strings.HasPrefix(fn, "cumulative_gnmax_"):
				sigma := num(t, in["sigma"])
				acc := NewAccountant(orders)
				accInd := NewAccountant(orders)
				for _, q := range queryList(t, in["query_list"]) {
					for r := 0; r < q.Repeat; r++ {
						acc.Add(GaussianDataDependentRDP(LogQGaussian(q.Counts, sigma), sigma, orders))
						accInd.Add(GaussianRDP(sigma, orders))
					}
				}
				checkConversion(t, orders, acc.Curve(), num(t, in["delta"]), out, tol)
				var indOut map[string]json.RawMessage
				if err := json.Unmarshal(out["data_independent_same_queries"], &indOut); err != nil {
					t.Fatal(err)
				}
				checkConversion(t, orders, accInd.Curve(), num(t, in["delta"]), indOut, tol)
			case strings.HasPrefix(fn, "is_data_independent_always_opt_gaussian_"):
				got := IsDataIndependentAlwaysOptGaussian(int(num(t, in["num_teachers"])), int(num(t, in["num_classes"])), num(t, in["sigma"]), orders)
				want := bools(t, out["result"])
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("order %v: %v, want %v", orders[i], got[i], want[i])
					}
				}
			case strings.HasPrefix(fn, "threshold_"):
				sigma1 := num(t, in["sigma1"])
				lp := LogPrAnswered(num(t, in["t"]), sigma1, ints(t, in["counts"]))
				checkF(t, "log_pr_answered", lp, num(t, out["log_pr_answered"]), tol)
				checkF(t, "pr_answered", math.Exp(lp), num(t, out["pr_answered"]), tol)
				checkF(t, "logq_used", math.Min(lp, log1mExp(lp)), num(t, out["logq_used"]), tol)
				checkFs(t, "rdp", ThresholdDataDependentRDP(lp, sigma1, orders), nums(t, out["rdp"]), tol)
				checkFs(t, "rdp_data_independent", ThresholdRDP(sigma1, orders), nums(t, out["rdp_data_independent"]), tol)
			case strings.HasPrefix(fn, "is_data_independent_always_opt_threshold_"):
				want := bools(t, out["result"])
				for i, o := range orders {
					got := IsDataIndependentAlwaysOptThreshold(int(num(t, in["num_teachers"])), num(t, in["threshold"]), num(t, in["sigma"]), o)
					if got != want[i] {
						t.Errorf("order %v: %v, want %v", o, got, want[i])
					}
				}
			case strings.HasPrefix(fn, "cumulative_confident_"):
				th, s1, s2 := num(t, in["t"]), num(t, in["sigma1"]), num(t, in["sigma2"])
				acc := NewAccountant(orders)
				answered := 0.0
				for _, q := range queryList(t, in["query_list"]) {
					for r := 0; r < q.Repeat; r++ {
						lp := LogPrAnswered(th, s1, q.Counts)
						pr := math.Exp(lp)
						acc.Add(ThresholdDataDependentRDP(lp, s1, orders))
						acc.AddScaled(GaussianDataDependentRDP(LogQGaussian(q.Counts, s2), s2, orders), pr)
						answered += pr
					}
				}
				checkF(t, "expected_answered", answered, num(t, out["expected_answered"]), tol)
				checkConversion(t, orders, acc.Curve(), num(t, in["delta"]), out, tol)
			case strings.HasPrefix(fn, "logq0_"):
				checkF(t, "logq0", LogQ0GNMax(num(t, in["sigma"]), num(t, in["order"])), num(t, out["logq0"]), tol)
			case strings.HasPrefix(fn, "ls_gnmax_"):
				ls := LocalSensitivityBoundsGNMax(ints(t, in["votes"]), int(num(t, in["num_teachers"])), num(t, in["sigma"]), num(t, in["order"]))
				checkLS(t, ls, out, tol)
			case strings.HasPrefix(fn, "ls_threshold_"):
				ls := LocalSensitivityBoundsThreshold(ints(t, in["counts"]), int(num(t, in["num_teachers"])), num(t, in["threshold"]), num(t, in["sigma"]), num(t, in["order"]))
				checkLS(t, ls, out, tol)
			case strings.HasPrefix(fn, "rdp_gnss_"):
				checkF(t, "rdp", GNSSRDP(num(t, in["beta"]), num(t, in["sigma"]), num(t, in["order"])), num(t, out["rdp"]), tol)
			case strings.HasPrefix(fn, "check_conditions_"):
				c5, c6 := CheckConditions(num(t, in["sigma"]), int(num(t, in["num_classes"])), num(t, in["order"]))
				var w5, w6 bool
				_ = json.Unmarshal(out["cond_C5"], &w5)
				_ = json.Unmarshal(out["cond_C6"], &w6)
				if c5 != w5 || c6 != w6 {
					t.Errorf("conditions = (%v, %v), want (%v, %v)", c5, c6, w5, w6)
				}
			case strings.HasPrefix(fn, "lnmax2018_"):
				lambda := num(t, in["lmbd"])
				logq := LogQLaplace(ints(t, in["counts"]), lambda)
				checkF(t, "logq", logq, num(t, out["logq"]), tol)
				checkFs(t, "rdp", PureEpsRDP(logq, 2/lambda, orders), nums(t, out["rdp"]), tol)
			case strings.HasPrefix(fn, "pate2017_logmgf_exact_"):
				q, e := num(t, in["q"]), num(t, in["priv_eps"])
				got := make([]float64, len(orders))
				for i, l := range orders {
					got[i] = LogMGFExact(q, e, l)
				}
				checkFs(t, "logmgf", got, nums(t, out["logmgf"]), tol)
			case strings.HasPrefix(fn, "pate2017_data_independent_"):
				nq, ne := num(t, in["num_queries"]), num(t, in["noise_eps"])
				tot := make([]float64, len(orders))
				for i, l := range orders {
					tot[i] = nq * LogMGFExact(1.0, 2*ne, l)
				}
				perL, eps, lOpt := MomentsEps(tot, num(t, in["delta"]))
				checkFs(t, "eps_per_l", perL, nums(t, out["eps_per_l"]), tol)
				checkF(t, "eps", eps, num(t, out["eps"]), tol)
				if w := num(t, out["l_opt"]); lOpt != w {
					t.Errorf("l_opt = %v, want %v", lOpt, w)
				}
			case strings.HasPrefix(fn, "pate2017_"):
				counts, ne := ints(t, in["counts"]), num(t, in["noise_eps"])
				beta := num(t, in["beta"])
				checkF(t, "q", ComputeQNoisyMax(counts, ne), num(t, out["q"]), tol)
				checkF(t, "q_approx", ComputeQNoisyMaxApprox(counts, ne), num(t, out["q_approx"]), tol)
				lm := make([]float64, len(orders))
				ss := make([]float64, len(orders))
				for i, l := range orders {
					lm[i] = LogMGFFromCounts(counts, ne, l)
					ss[i] = SmoothedSens(counts, ne, l, beta)
				}
				checkFs(t, "logmgf", lm, nums(t, out["logmgf"]), tol)
				checkFs(t, "smoothed_sens", ss, nums(t, out["smoothed_sens"]), tol)
			default:
				t.Fatalf("no test for reference case %s (%s)", tc.Name, tc.Section)
			}
		})
	}
}

func checkLS(t *testing.T, ls []float64, out map[string]json.RawMessage, tol float64) {
	t.Helper()
	checkFs(t, "ls_by_distance", ls, nums(t, out["ls_by_distance"]), tol)
	for k, raw := range out {
		if b, ok := strings.CutPrefix(k, "smooth_sensitivity_beta_"); ok {
			var beta float64
			if err := json.Unmarshal([]byte(b), &beta); err != nil {
				t.Fatal(err)
			}
			checkF(t, k, DiscountedMax(beta, ls), num(t, raw), tol)
		}
	}
}

func TestPaperOrdersMatchReference(t *testing.T) {
	rf := loadRef(t)
	want := rf.OrdersLists["pate2018_long"]
	got := PaperOrders()
	checkFs(t, "paper orders", got, want, 4e-16)
	def := DefaultOrders()
	if len(def) != 297 {
		t.Errorf("DefaultOrders has %d values, want 297", len(def))
	}
	for i := 1; i < len(def); i++ {
		if !(def[i] > def[i-1]) {
			t.Fatalf("DefaultOrders not strictly increasing at %d", i)
		}
	}
}
