"""Stage 3, results: the result model, the results file (append, resume, rewrite), summaries."""

from .model import CRITERIA, RATIO_NAMES, SCORE_NAMES, Result, iter_results, read_results

__all__ = ["CRITERIA", "RATIO_NAMES", "SCORE_NAMES", "Result", "iter_results", "read_results"]
