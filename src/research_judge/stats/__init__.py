"""Statistics that validate and compare share: intervals, kappa, paired tests."""

BOOTSTRAP_RESAMPLES = 10_000
"""Resamples behind a bootstrap interval (``validate --bootstrap``): stable 95% bounds."""

BOOTSTRAP_SEED = 0
"""The bootstrap's random seed (``validate --seed``): a report is reproducible by default."""

STABILITY_RESAMPLES = 2000
"""Resamples behind ``stability``'s kappa intervals (``stability --bootstrap``): fewer than
``BOOTSTRAP_RESAMPLES`` as each resample computes one Fleiss' kappa per criterion."""
