package report

// AuditCheck is one comparison made by package label's Audit.
type AuditCheck struct {
	Name       string  `json:"name"`
	Claimed    float64 `json:"claimed"`
	Recomputed float64 `json:"recomputed"`
	OK         bool    `json:"ok"`
	Detail     string  `json:"detail"`
}

// AuditLabel is what package label's Audit recomputed for one label column of a
// multi-label report.
type AuditLabel struct {
	Label           string  `json:"label"`
	RhoCheck        float64 `json:"rho_check"`
	RhoAnswer       float64 `json:"rho_answer"`
	DiscoveryRho    float64 `json:"discovery_rho"`
	ThresholdChecks int64   `json:"threshold_checks"`
	NoisyArgmaxes   int64   `json:"noisy_argmaxes"`
	Rho             float64 `json:"rho"` // its events' ρ, discovery excluded
}

// AuditResult is what package label's Audit recomputed from a report, independently of the
// figures the run wrote about itself.
type AuditResult struct {
	Mechanism string `json:"mechanism"`
	Filter    bool   `json:"filter"`
	Seeded    bool   `json:"seeded"`
	// Per-event zCDP ρ, from the recorded noise parameters.
	RhoCheck  float64 `json:"rho_check"`
	RhoAnswer float64 `json:"rho_answer"`
	// Class discovery (0 when the classes were public).
	DiscoveryRho   float64 `json:"discovery_rho"`
	DiscoveryDelta float64 `json:"discovery_delta"`
	// Event counts the recomputation used.
	ThresholdChecks int64 `json:"threshold_checks"`
	NoisyArgmaxes   int64 `json:"noisy_argmaxes"`
	Queries         int64 `json:"queries"`
	// The claim and its recomputation: ClaimRho is the ρ the claim rests
	// on (the filter's budget, or the worst case of the queries put),
	// Epsilon is ZCDPEps(ClaimRho, δ − discovery δ) rounded up.
	ClaimedEpsilon float64 `json:"claimed_epsilon"`
	Delta          float64 `json:"delta"`
	ClaimRho       float64 `json:"claim_rho"`
	Epsilon        float64 `json:"epsilon"`
	// The realized spend recomputed from the counts.
	Spent Spend `json:"spent"`
	// Per label column, in a multi-label report.
	Labels []AuditLabel `json:"labels,omitempty"`
	// Every comparison made; Holds is true when all passed.
	Checks []AuditCheck `json:"checks"`
	Holds  bool         `json:"holds"`
	// Explanation is the guarantee in plain words, one paragraph a line.
	Explanation []string `json:"explanation"`
}
