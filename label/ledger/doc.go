// Package ledger provides the privacy ledger of pate: per sensitive dataset,
// an append-only, fsync'd JSON-lines file of the runs that spent privacy on
// it. A run is recorded with its maximum spend before it releases anything
// (write-ahead) and with its realized spend when it ends, so a crash never
// under-counts. A lifetime ε per dataset is enforced under an exclusive
// file lock, so two concurrent runs cannot both spend the last of it.
//
// Identity: a dataset is its rows, not its bytes or its flags. The
// identity (ContentHash) hashes every row in a canonical form over every
// column, label columns included, and combines the row hashes so that the
// row order, the column order, the file format (CSV, Parquet, Arrow IPC)
// and the numeric types (int32 or int64, "1" or 1.0) do not matter. Every
// run on the same rows composes in one file, whatever its label columns and
// whatever command spent the budget (label, aggregate, replicate
// --private-report). A dataset can also be named (--dataset NAME, NamedID):
// runs that give the same name compose whatever their bytes, which is how a
// data set that grows, or votes computed elsewhere (pate aggregate), are
// tied to the data they came from. A dataset's file is named by Key, an
// HMAC of its identity under a random key kept in the directory, so that
// nothing that names the file says anything of the data without that key.
//
// Composition rule. Run i records its δ_i, the part f_i ≤ δ_i of it that is
// a failure probability (the class discovery's share, svt's stable-release
// failure) and, charged, its realized zCDP ρ_i when it ended, else its
// maximum. Run i is then f_i-approximately ρ_i-zCDP, and such runs compose
// by adding both (approximate zCDP, Bun & Steinke 2016, section 8: the ρs
// add and the δs add under adaptive composition). The same holds of their
// RDP curves, order by order. The dataset's total is, at δ = Σ δ_i,
//
//	ε = min( ZCDPEps(Σ ρ_i, δ − Σ f_i),            improved conversion, best order
//	         EpsImproved(Σ curve_i, δ − Σ f_i),    the same over the paper's orders
//	         Σ n_i·ε0_i  when every run is pure )  basic composition, δ ≥ Σ f_i
//
// where curve_i is λρ_i, except for a run of pure events: n_i events of
// ε0_i on top of a zCDP part ρ0_i (class discovery) have the curve
// n_i·min(ε0_i, λε0_i²/2) + λρ0_i, and a pure run without an end entry
// that declared its cap (an ε by basic composition or a ρ_B by zCDP,
// whichever allows more events) has max(λρ_B, min(ε, λε²/2)). Each reading
// is valid at δ; so is their minimum. The statement holds at the summed δ of
// the runs that made it: it never goes to ∞ because δs were used, it holds
// at a δ that grows with the runs. A run that ended having released
// nothing (realized ρ = 0) charges neither ρ nor δ; a run without an end
// entry (crashed, killed, aborted, or still running) is charged its maximum
// and its whole δ. --lifetime-epsilon compares this ε, the new run counted
// at its maximum, against the lifetime.
//
// Seeds. A seeded run (--seed, or the key of --replicable) draws its
// partition and noise from the seed: two such runs on D and on D plus one
// row share every draw, so their outputs differ only where that row
// changed a vote (ε = ∞ for the pair), and no composition of their ε's says
// so. Since the neighbouring data set has another identity, the check
// cannot be per dataset: Begin refuses any second use of a seed in the
// same ledger directory, whatever the dataset, and records only a keyed
// commitment (HMAC-SHA256 under a random key kept in the directory) of it.
// The ledger cannot see runs recorded elsewhere or with --no-ledger.
package ledger
