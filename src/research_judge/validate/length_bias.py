"""Does the judge pass longer answers more often than the humans' verdicts explain?

Humans prefer longer answers too, so the raw correlation of length with the judge's verdict
proves nothing. The question is whether length still predicts the judge's verdict once the human
label is known: a logistic regression of judge pass on standardised log length and the human
label, unpenalised (an L2 penalty such as scikit-learn's default would shrink the very coefficient
we want), fitted by Newton-Raphson (``stats/logit.py``), with a Wald interval from the Fisher
information. Within-class rank correlations back it up
without assuming a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..stats.intervals import Z95, Interval
from ..stats.tails import normal_two_sided_p, spearman
from .dataset import Paired

MIN_FIT_N = 30  # below this a two-predictor logistic fit is noise
MIN_VERDICTS_EACH = 5  # fewest judge passes and fails the fit sample may hold
MIN_CLASS_N = 10  # fewest items for a within-class rank correlation
MAX_ABS_COEF = 10.0  # an odds ratio above e^10 per SD only comes from (near) separation


@dataclass
class LengthModel:
    scope: str  # which sessions the model was fitted on, and with which predictors
    n: int
    odds_ratio_per_sd: float | None = None
    odds_ratio_ci: Interval | None = None
    coefficient: float | None = None
    standard_error: float | None = None
    p_value: float | None = None
    note: str = ""


@dataclass
class LengthBias:
    unit: str | None  # "words" or "chars"
    sd_log_length: float | None = None
    model: LengthModel | None = None
    reading: str = ""
    median_length: dict[str, float | None] = field(default_factory=dict)
    within_class: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        m = self.model
        return {
            "length_unit": self.unit,
            "sd_log_length": self.sd_log_length,
            "n": m.n if m else 0,
            "scope": m.scope if m else None,
            "odds_ratio_per_sd": m.odds_ratio_per_sd if m else None,
            "odds_ratio_ci": m.odds_ratio_ci if m else None,
            "coefficient": m.coefficient if m else None,
            "standard_error": m.standard_error if m else None,
            "p_value": m.p_value if m else None,
            "reading": self.reading,
            "median_length": self.median_length,
            "within_class_spearman": self.within_class,
        }


def length_bias(data: Paired) -> LengthBias:
    unit, length = _length(data)
    out = LengthBias(unit=unit)
    if length is None:
        out.reading = "no answer lengths in the results (answer_stats missing): not measured"
        out.warnings.append(f"length bias: {out.reading}")
        return out
    log_len = np.log1p(length)
    out.median_length = _median_by_cell(length, data.human_pass, data.judge_pass)
    # The unit of odds_ratio_per_sd (see _fit); 0 when every answer has the same length.
    out.sd_log_length = float(np.std(log_len)) if log_len.size else None
    out.model = _fit(log_len, data.human_pass, data.judge_pass)
    out.reading = _reading(out.model, unit)
    if out.model.odds_ratio_per_sd is None:
        out.warnings.append(f"length bias odds ratio undefined: {out.model.note}")
    out.within_class = {
        "human_pass": _spearman_block(log_len, data, data.human_pass, out.warnings, "passes"),
        "human_fail": _spearman_block(log_len, data, ~data.human_pass, out.warnings, "fails"),
    }
    return out


def _length(data: Paired) -> tuple[str | None, npt.NDArray[np.float64] | None]:
    # answer_stats defaults to zeros, so "all zero" means an older results file without them.
    if data.n and np.any(data.words > 0):
        return "words", data.words
    if data.n and np.any(data.chars > 0):
        return "chars", data.chars
    return None, None


def _fit(
    log_len: npt.NDArray[np.float64], human: npt.NDArray[np.bool_], judge: npt.NDArray[np.bool_]
) -> LengthModel:
    # Length can only explain judge verdicts that vary. In a human class where the judge gave
    # one verdict throughout (a lenient judge passing every human fail, a strict one failing
    # every human pass), the human label alone settles those verdicts and its coefficient has no
    # finite estimate; the length effect is identified by the class that varies, fitted there
    # with length only.
    varies = {
        name: bool(judge[m].any() and (~judge[m]).any())
        for name, m in (("passes", human), ("fails", ~human))
    }
    has_pass, has_fail = bool(human.any()), bool((~human).any())
    if varies["passes"] and varies["fails"]:
        keep, scope = np.ones_like(human), "all sessions; predictors: z(log length), human label"
    elif varies["passes"] or varies["fails"]:
        cls = "passes" if varies["passes"] else "fails"
        keep = human if cls == "passes" else ~human
        other = "fail" if cls == "passes" else "pass"
        scope = (
            f"human {cls} only (one human class labelled)"
            if not (has_pass and has_fail)
            else f"human {cls} only (the judge gave every human {other} the same verdict)"
        )
    else:
        note = (
            "the judge gave the same verdict to every session of each human class, so length "
            "has nothing left to explain"
        )
        if has_pass and has_fail and not np.any(human != judge):
            note = (
                "the judge's verdict equals the human label on every session, so length has "
                "nothing left to explain"
            )
        return LengthModel("all sessions", human.size, note=note)
    x, y = log_len[keep], judge[keep]
    model = LengthModel(scope, int(y.size))
    verdicts_each = min(int(y.sum()), int((~y).sum()))
    if y.size < MIN_FIT_N or verdicts_each < MIN_VERDICTS_EACH:
        model.note = (
            f"n too small to tell ({y.size} sessions, {verdicts_each} of the rarer judge "
            f"verdict; need {MIN_FIT_N} and {MIN_VERDICTS_EACH})"
        )
        return model
    # Equality, not a zero SD: identical floats can have an SD of 1e-16, and dividing by it
    # would turn rounding noise into a "length predicts the verdict exactly" reading.
    if np.ptp(x) == 0:
        model.note = "every answer in the fitted sessions has the same length"
        return model
    # One unit for every scope: the SD of log length over all compared sessions, the SD the
    # report prints, so "per SD" means the same thing whichever class was fitted.
    z = (x - log_len.mean()) / float(np.std(log_len))
    columns = [z, human[keep].astype(float)] if scope.startswith("all") else [z]
    _fit_logit(np.column_stack(columns), y.astype(int), model)
    return model


def _fit_logit(
    features: npt.NDArray[np.float64], y: npt.NDArray[np.int64], model: LengthModel
) -> None:
    from ..stats.logit import fit_logit

    fit = fit_logit(features, y)
    if fit is None:
        # Neither converged nor diverged: no reason to blame separation, so none is named.
        model.note = "the logistic fit did not converge (Newton's method stalled); no estimate"
        return
    coef, info = fit.coef, fit.information
    # Only the length coefficient is guarded: a near-perfect judge has a large but finite
    # human-label coefficient, and that is no reason to withhold the length effect.
    variance = np.linalg.pinv(info)[1, 1] if np.all(np.isfinite(info)) else math.inf
    if fit.diverged or abs(coef[1]) > MAX_ABS_COEF or not (0 < variance < math.inf):
        model.note = (
            "perfect or near-perfect separation: length (with the human label) predicts the "
            "judge's verdict almost exactly, so the odds ratio has no finite estimate"
        )
        return
    se = math.sqrt(float(variance))
    beta = float(coef[1])
    model.coefficient, model.standard_error = beta, se
    model.odds_ratio_per_sd = math.exp(beta)
    model.odds_ratio_ci = (math.exp(beta - Z95 * se), math.exp(beta + Z95 * se))
    model.p_value = normal_two_sided_p(beta / se)


def _reading(model: LengthModel, unit: str | None) -> str:
    if model.odds_ratio_per_sd is None or model.odds_ratio_ci is None:
        return f"not measured: {model.note}"
    low, high = model.odds_ratio_ci
    ratio = f"odds ratio {model.odds_ratio_per_sd:.2f} per SD of log {unit} ({low:.2f}-{high:.2f})"
    if low > 1:
        return f"longer answers pass more often than the human labels explain: {ratio}"
    if high < 1:
        return f"shorter answers pass more often than the human labels explain: {ratio}"
    return f"no length effect detected beyond the human label: {ratio}"


def _median_by_cell(
    length: npt.NDArray[np.float64], human: npt.NDArray[np.bool_], judge: npt.NDArray[np.bool_]
) -> dict[str, float | None]:
    cells = {
        "human_pass_judge_pass": human & judge,
        "human_pass_judge_fail": human & ~judge,
        "human_fail_judge_pass": ~human & judge,
        "human_fail_judge_fail": ~human & ~judge,
    }
    return {k: float(np.median(length[m])) if m.any() else None for k, m in cells.items()}


def _spearman_block(
    log_len: npt.NDArray[np.float64],
    data: Paired,
    in_class: npt.NDArray[np.bool_],
    warnings_out: list[str],
    class_name: str,
) -> dict[str, dict[str, object]]:
    targets: dict[str, npt.NDArray[np.int64]] = {"judge_pass": data.judge_pass.astype(np.int64)}
    targets.update({f"judge_{k}": v for k, v in data.judge_scores.items() if np.any(v > 0)})
    block: dict[str, dict[str, object]] = {}
    undefined: dict[str, list[str]] = {}
    for name, values in targets.items():
        mask = in_class & (values > 0 if name != "judge_pass" else True)
        x, y = log_len[mask], values[mask]
        entry: dict[str, object] = {"n": int(x.size), "rho": None, "p_value": None}
        if x.size < MIN_CLASS_N:
            reason = f"n too small to tell (fewer than {MIN_CLASS_N} human {class_name})"
        elif np.unique(y).size == 1 or np.unique(x).size == 1:
            reason = "no variation (every value the same)"
        else:
            rho, p = spearman(x, y)
            entry["rho"], entry["p_value"], reason = rho, p, ""
        if reason:
            entry["note"] = reason
            undefined.setdefault(reason, []).append(name)
        block[name] = entry
    for reason, names in undefined.items():
        warnings_out.append(
            f"length vs {', '.join(names)} among human {class_name}: spearman undefined, {reason}"
        )
    return block
