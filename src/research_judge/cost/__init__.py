"""Prices, context windows and token estimates: what a call costs and whether it fits, before
and after. Below the judge and the clients; the per-session estimate and the budget that use
them are ``judge.estimate``."""
