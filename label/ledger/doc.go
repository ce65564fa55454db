// Package ledger provides the privacy ledger of pate: per sensitive dataset
// (identified by the SHA-256 of its bytes and its label columns, kept only
// here), an append-only, fsync'd JSON-lines file of the runs that spent
// privacy on it. A run is recorded with its maximum spend before it releases
// anything (write-ahead) and with its realized spend when it ends, so a
// crash never under-counts. Runs compose by adding their zCDP ρ; a lifetime
// ε per dataset is enforced under an exclusive file lock, so two concurrent
// runs cannot both spend the last of it.
//
// δ rule: the composed total is judged at the δ of the run being admitted:
// ε_total = ZCDPEps(Σ ρ_i, δ − Σ δ_discovery,i), where the sum runs over
// every recorded run and the new one, and δ_discovery,i is the part of a
// run's δ spent on privately releasing its class set (0 when the classes
// were public). A run that has no end entry is charged its maximum ρ.
package ledger
