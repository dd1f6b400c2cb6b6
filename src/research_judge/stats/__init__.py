"""Statistics that validate and compare share: intervals, kappa, paired tests."""
