// Package ledger provides the privacy ledger of pate: per sensitive dataset,
// an append-only, fsync'd JSON-lines file of the runs that spent privacy on
// it. A run is recorded with its maximum spend before it releases anything
// (write-ahead) and with its realized spend when it ends, so a crash never
// under-counts. A lifetime ε per dataset is enforced under an exclusive
// file lock, so two concurrent runs cannot both spend the last of it.
//
// Identity: what the ledger promises. A dataset is what the user names
// (--dataset NAME, NamedID): every run that gives the name composes in one
// file, whatever rows it read, whatever its label columns and whatever
// command spent the budget (label, aggregate, replicate --private-report,
// analyze --release-ss). A lifetime ε is kept only for a named dataset
// (ErrLifetimeNeedsName): a copy with one row fewer, a duplicated row,
// values rounded otherwise or a column added is, by its rows, another
// dataset with a fresh account, so no content identity can keep a
// lifetime. Each entry of a named dataset keeps the content identity of the
// rows the run read (keyed, see below) as a check: a run whose rows differ
// from the earlier runs' is composed with them, and the caller is warned
// (BeginRequest.Warn). A run without a name is recorded under its content
// identity (ContentHash): every row hashed in a canonical form over every
// column, label columns included, combined so that the row order, the
// column order, the file format (CSV, Parquet, Arrow IPC) and the numeric
// types (int32 or int64, "1" or 1.0) do not matter — one exact multiset of
// rows: a record of what was spent on those rows, and no more.
//
// Privacy units. Each run records its privacy unit (a row, or all rows
// sharing one value of a column). Runs of different units do not compose
// into one figure: a dataset whose runs protect more than one unit has a
// total per unit (Dataset.Units) and no overall ε (+Inf), and under a
// lifetime a run of another unit than the recorded runs' is refused
// (ErrMixedUnits).
//
// A dataset's file is named by Key, an
// HMAC of its identity under a random key kept in the directory, so that
// nothing that names the file says anything of the data without that key.
//
// Composition rule. Run i records its δ_i, the part f_i ≤ δ_i of it that is
// a failure probability (the class discovery's share, svt's stable-release
// failure) and, charged, its realized zCDP ρ_i when it ended, else its
// maximum. Run i is then f_i-approximately ρ_i-zCDP, and such runs compose
// by adding both (approximate zCDP, Bun & Steinke 2016, section 8: the ρs
// add and the δs add under adaptive composition). The same holds of their
// RDP curves, order by order. And run i alone is (e_i, δ_i)-DP, with e_i
// the smallest of its claim ε_i (the budget its filter enforced, when it
// had one), ZCDPEps(ρ_i, δ_i − f_i), and n_i·ε0_i when it ended with pure
// events only: the runs compose by basic composition too (Σ e_i at Σ δ_i).
// The total of the runs of one privacy unit is, at δ = Σ δ_i,
//
//	ε = max( min( ZCDPEps(Σ ρ_i, δ − Σ f_i),          improved conversion, best order
//	              EpsImproved(Σ curve_i, δ − Σ f_i),  the same over the paper's orders
//	              Σ e_i ),                            basic composition
//	         max_i e_i )                              never below one run alone
//
// Orders. A run's ρ may hold on the Rényi orders 2..A_i only (private-knn's
// subsampled Gaussian; Entry.MaxOrder): its curve is then λρ_i on [2, A_i]
// and unknown (+Inf) elsewhere, its own e_i is read on [2, A_i], and the
// summed ρ converts only on the orders every charged run covers, [2, min
// A_i] — at order 2 when the best order of the sum would be lower. The
// total says which (Dataset.MaxOrder). The last line does not tighten
// anything: a composed figure at the summed δ may read below one run alone
// at its own δ, and a larger ε is valid wherever a smaller one is.
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
