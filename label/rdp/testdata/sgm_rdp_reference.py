"""Reference values of the sampled Gaussian mechanism's RDP at integer orders.

Origin: a port to mpmath (50 significant digits) of `_log_add`, `_log_comb` and
`_compute_log_a_int` from dp_accounting
(google/differential-privacy, python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant.py,
commit b5b0286e313b64a692abfc8c528d54ef47d960a0, Apache License 2.0), which
evaluates the integer-order closed form of Mironov, Talwar, Zhang 2019
("Rényi Differential Privacy of the Sampled Gaussian Mechanism", §3.3):

    A_alpha = sum_{i=0}^{alpha} C(alpha, i) q^i (1-q)^(alpha-i) exp((i^2 - i) / (2 sigma^2))
    RDP(alpha) = log(A_alpha) / (alpha - 1)

The loop is theirs line for line; only the float operations are mpmath's.
Run: python3 sgm_rdp_reference.py > sgm_rdp_reference.json
"""
import json

import mpmath

mpmath.mp.dps = 50


def _log_add(logx, logy):
  """Adds two numbers in the log space."""
  a, b = min(logx, logy), max(logx, logy)
  if a == -mpmath.inf:  # adding 0
    return b
  # Use exp(a) + exp(b) = (exp(a - b) + 1) * exp(b)
  return mpmath.log1p(mpmath.exp(a - b)) + b  # log1p(x) = log(x + 1)


def _log_comb(n, k):
  """Computes log of binomial coefficient."""
  return (
      mpmath.loggamma(n + 1)
      - mpmath.loggamma(k + 1)
      - mpmath.loggamma(n - k + 1)
  )


def _compute_log_a_int(q, sigma, alpha):
  """Computes log(A_alpha) for integer alpha, 0 < q < 1."""

  # Initialize with 0 in the log space.
  log_a = -mpmath.inf
  log1mq = mpmath.log1p(-q)

  for i in range(alpha + 1):
    log_coef_i = _log_comb(alpha, i) + i * mpmath.log(q) + (alpha - i) * log1mq
    s = log_coef_i + (i * i - i) / (2 * (sigma**2))
    log_a = _log_add(log_a, s)

  return log_a


def main():
  qs = ["0.001", "0.01", "0.05", "0.1", "0.25", "0.5", "0.9"]
  sigmas = ["0.7", "1", "2", "5", "10", "30", "100"]
  alphas = [2, 3, 4, 5, 8, 12, 16, 24, 32, 48, 64, 128, 256]
  cases = []
  for qs_ in qs:
    for ss in sigmas:
      for a in alphas:
        q, s = mpmath.mpf(qs_), mpmath.mpf(ss)
        la = _compute_log_a_int(q, s, a)
        cases.append({
            "q": qs_, "sigma": ss, "alpha": a,
            "log_a": mpmath.nstr(la, 25),
            "rdp": mpmath.nstr(la / (a - 1), 25),
        })
  print(json.dumps({
      "origin": "label/rdp/testdata/sgm_rdp_reference.py: mpmath (50 digits) port of dp_accounting "
                "rdp_privacy_accountant._compute_log_a_int (google/differential-privacy@b5b0286e, Apache-2.0); "
                "Mironov, Talwar, Zhang 2019 integer-order closed form",
      "sensitivity": 1,
      "cases": cases,
  }, indent=1))


if __name__ == "__main__":
  main()
