"""Unpenalised logistic regression by Newton-Raphson, with the Fisher information.

The same maximum-likelihood estimate scikit-learn's ``LogisticRegression(C=inf)`` or
statsmodels' ``Logit`` reach (the tests hold it to both), in a few lines of numpy: importing
either library costs over a second of start-up for a fit of two or three coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

MAX_ITER = 200
MAX_HALVINGS = 40
# Converged when the Newton decrement g' H^-1 g / 2 (the predicted gain still to be had) is
# below this share of the negative log-likelihood. A relative criterion: an absolute bound on
# the gradient cannot be met once floating-point noise in a sum over many rows exceeds it, and
# Newton then stalls at the optimum with nothing left to improve.
RELATIVE_TOL = 1e-12
# Near the optimum a step may fail to lower the loss only through rounding; if the remaining
# predicted gain is this small a share of the loss, the estimate is as good as doubles allow.
NOISE_TOL = 1e-8
# On standardised features a coefficient this large means fitted probabilities within 1e-13 of
# 0 or 1: the likelihood is still rising towards a coefficient at infinity (separation).
DIVERGED_COEF = 30.0


@dataclass(frozen=True)
class LogitFit:
    coef: npt.NDArray[np.float64]  # intercept first, then one per feature column
    information: npt.NDArray[np.float64]  # X' W X at the estimate, intercept column included
    # True when a coefficient ran off towards infinity (complete or quasi-complete separation):
    # ``coef`` is then where the iterations stopped, not an estimate.
    diverged: bool = False


def fit_logit(features: npt.NDArray[np.float64], y: npt.NDArray[np.int64]) -> LogitFit | None:
    """Maximum-likelihood fit with an intercept.

    Returns the estimate; a fit flagged ``diverged`` when a coefficient grows without bound (the
    likelihood keeps rising as it runs off to infinity: separation); None only when Newton's
    method neither converges nor diverges within ``MAX_ITER`` steps (a singular information
    matrix on the way, or no step that improves the fit while the predicted gain is still large).
    """
    design = np.column_stack([np.ones(len(y)), features])
    target = y.astype(np.float64)
    beta = np.zeros(design.shape[1])
    loss = _neg_loglik(design, target, beta)
    for _ in range(MAX_ITER):
        prob = _sigmoid(design @ beta)
        gradient = design.T @ (target - prob)
        information = _information(design, prob)
        if np.max(np.abs(beta)) > DIVERGED_COEF:
            return LogitFit(beta, information, diverged=True)
        try:
            step = np.linalg.solve(information, gradient)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(step)):
            return None
        decrement = float(gradient @ step) / 2  # predicted gain of the full Newton step
        if decrement <= RELATIVE_TOL * max(loss, 1.0):
            return _final(design, beta + step)
        # Step halving keeps every iterate an improvement; Newton's full step usually is one.
        for _ in range(MAX_HALVINGS):
            candidate = beta + step
            new_loss = _neg_loglik(design, target, candidate)
            if new_loss <= loss:
                break
            step = step / 2
        else:
            if decrement <= NOISE_TOL * max(loss, 1.0):
                return _final(design, beta + step)  # rounding, not the model, blocks it
            return None
        beta, loss = candidate, new_loss
    return None


def _final(design: npt.NDArray[np.float64], beta: npt.NDArray[np.float64]) -> LogitFit:
    # The last Newton step is taken without the loss test: inside the quadratic region it moves
    # the estimate by far less than its standard error but squares the remaining error, where
    # the loss itself can no longer tell the two points apart.
    return LogitFit(beta, _information(design, _sigmoid(design @ beta)))


def _sigmoid(eta: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    # The tanh form never overflows, for any sign or size of eta.
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * eta)), dtype=np.float64)


def _neg_loglik(
    design: npt.NDArray[np.float64], y: npt.NDArray[np.float64], beta: npt.NDArray[np.float64]
) -> float:
    eta = design @ beta
    return float(np.sum(np.logaddexp(0.0, eta) - y * eta))


def _information(
    design: npt.NDArray[np.float64], prob: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    # For the logit link the observed and expected information coincide: X' W X.
    return np.asarray(design.T @ (design * (prob * (1 - prob))[:, None]), dtype=np.float64)
